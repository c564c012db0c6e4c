package rendezvous

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Header names of the signature scheme.
const (
	// HeaderContainer names the container the launcher runs in: the
	// request is signed with that container's key (ContainerKey), which
	// only that container holds.
	HeaderContainer = "X-Tfyarn-Container"
	HeaderTimestamp = "X-Tfyarn-Timestamp" // Unix milliseconds
	HeaderNonce     = "X-Tfyarn-Nonce"     // 16 random bytes, hex
	// HeaderContentSHA256 is the SHA-256 of the body as sent (sealed),
	// hex: the signature covers it, so the server checks the signature
	// before it reads a byte of the body.
	HeaderContentSHA256 = "X-Tfyarn-Content-Sha256"
	HeaderSignature     = "X-Tfyarn-Signature" // HMAC-SHA256, hex
)

// The domain strings keep a MAC or a key of one use from ever being valid
// in another, and leave room for a version 3.
const (
	requestDomain   = "tfyarn-rendezvous-v2 request"
	responseDomain  = "tfyarn-rendezvous-v2 response"
	containerDomain = "tfyarn-rendezvous-v2 container"
	macKeyDomain    = "tfyarn-rendezvous-v2 mac key"
	sealKeyDomain   = "tfyarn-rendezvous-v2 seal key"
	nonceBytes      = 16
)

// ContainerKey is the key of one container's launcher: the AM hands it
// to that container only (in its credentials, under SecretAlias) and
// derives it again from the job's secret for every request that names
// the container. A launcher can therefore sign only as its own container,
// and the AM binds what it says to the task that container runs.
func ContainerKey(secret []byte, containerID string) []byte {
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "%s\n%s", containerDomain, containerID)
	return m.Sum(nil)
}

// keys are what one container's key gives: a MAC key for the signatures
// and an AEAD (AES-256-GCM) that seals every body both ways, so tokens
// and stderr tails never cross the network in clear.
type keys struct {
	mac  []byte
	aead cipher.AEAD
}

func newKeys(containerKey []byte) (keys, error) {
	if err := checkSecret(containerKey); err != nil {
		return keys{}, err
	}
	return keysWithMAC(containerKey, deriveKey(containerKey, macKeyDomain))
}

// keysWithMAC completes keys whose MAC key is already derived: the server
// derives the cipher only for a request whose signature checked out.
func keysWithMAC(containerKey, mac []byte) (keys, error) {
	block, err := aes.NewCipher(deriveKey(containerKey, sealKeyDomain))
	if err != nil {
		return keys{}, fmt.Errorf("rendezvous: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return keys{}, fmt.Errorf("rendezvous: %w", err)
	}
	return keys{mac: mac, aead: aead}, nil
}

func deriveKey(containerKey []byte, domain string) []byte {
	m := hmac.New(sha256.New, containerKey)
	m.Write([]byte(domain))
	return m.Sum(nil)
}

// sealOverhead is what sealing adds to a body: the AEAD's nonce and tag.
const sealOverhead = 12 + 16

// seal encrypts and authenticates plain for the message described by ad.
func (k keys) seal(plain []byte, ad string) ([]byte, error) {
	out := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plain)+k.aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		return nil, fmt.Errorf("rendezvous: nonce: %w", err)
	}
	return k.aead.Seal(out, out, plain, []byte(ad)), nil
}

var errUnsealable = errors.New("body does not open with this container's key")

// open reverses seal.
func (k keys) open(sealed []byte, ad string) ([]byte, error) {
	n := k.aead.NonceSize()
	if len(sealed) < n+k.aead.Overhead() {
		return nil, errUnsealable
	}
	plain, err := k.aead.Open(nil, sealed[:n], sealed[n:], []byte(ad))
	if err != nil {
		return nil, errUnsealable
	}
	return plain, nil
}

// requestAD binds a sealed request body to the request's signed fields.
func requestAD(method, uri, container, ts, nonce string) string {
	return requestDomain + "\n" + method + "\n" + uri + "\n" + container + "\n" + ts + "\n" + nonce
}

// responseAD binds a sealed response body to the request it answers.
func responseAD(requestSig string, status int) string {
	return responseDomain + "\n" + requestSig + "\n" + strconv.Itoa(status)
}

// requestMAC covers everything the server acts on: the method and the URI
// (path and query, which names the task), the container whose key signs,
// the body (through its digest, so the server can check the signature
// before reading the body), and the timestamp and nonce that make the
// request single-use. Fields are newline-separated and none can contain a
// newline (the URI is escaped, the container id is printable ASCII, the
// others are digits or hex), so no two requests share a canonical form.
func (k keys) requestMAC(method, uri, container, ts, nonce, digest string) []byte {
	m := hmac.New(sha256.New, k.mac)
	fmt.Fprintf(m, "%s\n%s\n%s\n%s\n%s\n%s\n%s", requestDomain, method, uri, container, ts, nonce, digest)
	return m.Sum(nil)
}

// responseMAC binds a response to the request that asked for it through
// the request's signature, which covers its method, URI, container,
// nonce and body: an old signed response cannot be replayed to a
// launcher, nor one that answered another endpoint.
func (k keys) responseMAC(requestSig string, status int, digest string) []byte {
	m := hmac.New(sha256.New, k.mac)
	fmt.Fprintf(m, "%s\n%s\n%d\n%s", responseDomain, requestSig, status, digest)
	return m.Sum(nil)
}

func digestHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// signed is what the client keeps of a request it signed, to check the
// answer.
type signed struct {
	sig string
}

// sign seals body (nil: no body) for req, sets the signature headers and
// returns the body to send.
func (k keys) sign(req *http.Request, container string, body []byte, now time.Time) ([]byte, signed, error) {
	var raw [nonceBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, signed{}, fmt.Errorf("rendezvous: nonce: %w", err)
	}
	nonce := hex.EncodeToString(raw[:])
	ts := strconv.FormatInt(now.UnixMilli(), 10)
	uri := req.URL.RequestURI()
	var wire []byte
	if body != nil {
		var err error
		if wire, err = k.seal(body, requestAD(req.Method, uri, container, ts, nonce)); err != nil {
			return nil, signed{}, err
		}
	}
	digest := digestHex(wire)
	sig := hex.EncodeToString(k.requestMAC(req.Method, uri, container, ts, nonce, digest))
	req.Header.Set(HeaderContainer, container)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderNonce, nonce)
	req.Header.Set(HeaderContentSHA256, digest)
	req.Header.Set(HeaderSignature, sig)
	return wire, signed{sig: sig}, nil
}

// authError is why a request was refused. Its text goes to the server's
// log and back to the caller; it never includes key material or MACs.
type authError struct{ reason string }

func (e *authError) Error() string { return e.reason }

// signedHeaders are a request's signature headers, checked for form.
type signedHeaders struct {
	container, ts, nonce, digest, sig string
	at                                time.Time
	mac                               []byte
}

// parseSignedHeaders checks the form of the signature headers: cheap,
// and before any key is derived.
func parseSignedHeaders(h http.Header) (signedHeaders, error) {
	s := signedHeaders{
		container: h.Get(HeaderContainer), ts: h.Get(HeaderTimestamp), nonce: h.Get(HeaderNonce),
		digest: h.Get(HeaderContentSHA256), sig: h.Get(HeaderSignature),
	}
	if s.container == "" || s.ts == "" || s.nonce == "" || s.digest == "" || s.sig == "" {
		return s, &authError{"unsigned request (missing " + HeaderContainer + ", " + HeaderTimestamp + ", " + HeaderNonce + ", " + HeaderContentSHA256 + " or " + HeaderSignature + ")"}
	}
	if checkID("container id", s.container) != nil {
		return s, &authError{"malformed container id"}
	}
	if err := checkNonce(s.nonce); err != nil {
		return s, err
	}
	ms, err := strconv.ParseInt(s.ts, 10, 64)
	if err != nil || len(s.ts) > 16 {
		return s, &authError{"malformed timestamp"}
	}
	s.at = time.UnixMilli(ms)
	if d, err := hex.DecodeString(s.digest); err != nil || len(d) != sha256.Size {
		return s, &authError{"malformed content digest"}
	}
	if s.mac, err = hex.DecodeString(s.sig); err != nil || len(s.mac) != sha256.Size {
		return s, &authError{"malformed signature"}
	}
	return s, nil
}

// verify checks the signature over the request's headers in constant
// time, then its timestamp against skew. It reads no body: the body's
// digest is among what is signed, and the caller compares it once it has
// read a body the signature allowed. Replays are the caller's business
// (the nonce cache), after verify: only a correctly signed nonce may take
// a place in the cache, so strangers cannot fill it.
func (k keys) verify(req *http.Request, s signedHeaders, now time.Time, skew time.Duration) error {
	if !hmac.Equal(s.mac, k.requestMAC(req.Method, req.RequestURI, s.container, s.ts, s.nonce, s.digest)) {
		return &authError{"bad signature (wrong key, or the request was altered)"}
	}
	if d := now.Sub(s.at); d > skew || d < -skew {
		return &authError{fmt.Sprintf("timestamp off by %s, more than the allowed %s (stale or replayed request, or clocks out of sync)", d.Round(time.Second), skew)}
	}
	return nil
}

func checkNonce(n string) error {
	if len(n) != 2*nonceBytes {
		return &authError{"malformed nonce"}
	}
	if _, err := hex.DecodeString(n); err != nil {
		return &authError{"malformed nonce"}
	}
	return nil
}

// checkResponse verifies the server's signature on a response to the
// request signed as req, and opens its body.
func (k keys) checkResponse(req signed, status int, header http.Header, wire []byte) ([]byte, error) {
	got, err := hex.DecodeString(header.Get(HeaderSignature))
	if err != nil || len(got) != sha256.Size {
		return nil, errUnsignedResponse
	}
	if !hmac.Equal(got, k.responseMAC(req.sig, status, digestHex(wire))) {
		return nil, errBadResponseSignature
	}
	if len(wire) == 0 {
		return nil, nil
	}
	plain, err := k.open(wire, responseAD(req.sig, status))
	if err != nil {
		return nil, errBadResponseSignature
	}
	return plain, nil
}

var (
	errUnsignedResponse     = errors.New("response carries no valid signature: is this address really the tfyarn AM's rendezvous server?")
	errBadResponseSignature = errors.New("response signature does not match: wrong container key, or not our AM")
)
