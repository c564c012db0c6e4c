package rendezvous

import (
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
	HeaderTimestamp = "X-Tfyarn-Timestamp" // Unix milliseconds
	HeaderNonce     = "X-Tfyarn-Nonce"     // 16 random bytes, hex
	HeaderSignature = "X-Tfyarn-Signature" // HMAC-SHA256, hex
)

// The domain strings keep a request's MAC from ever being valid as a
// response's, and leave room for a version 2.
const (
	requestDomain  = "tfyarn-rendezvous-v1 request"
	responseDomain = "tfyarn-rendezvous-v1 response"
	nonceBytes     = 16
)

type signer struct{ key []byte }

func newSigner(secret []byte) (signer, error) {
	if err := checkSecret(secret); err != nil {
		return signer{}, err
	}
	return signer{key: append([]byte(nil), secret...)}, nil
}

// requestMAC covers everything the server acts on: the method and the URI
// (path and query, which names the task), the body, and the timestamp and
// nonce that make the request single-use. Fields are newline-separated and
// none can contain a newline (the URI is escaped, the others are digits or
// hex), so no two requests share a canonical form.
func (s signer) requestMAC(method, uri, timestamp, nonce string, body []byte) []byte {
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, s.key)
	fmt.Fprintf(m, "%s\n%s\n%s\n%s\n%s\n%x", requestDomain, method, uri, timestamp, nonce, sum)
	return m.Sum(nil)
}

// responseMAC binds a response to the request that asked for it through
// the request's nonce, so an old signed response cannot be replayed to a
// launcher either.
func (s signer) responseMAC(nonce string, status int, body []byte) []byte {
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, s.key)
	fmt.Fprintf(m, "%s\n%s\n%d\n%x", responseDomain, nonce, status, sum)
	return m.Sum(nil)
}

// sign sets the signature headers on req for body and returns the nonce,
// which the caller needs to check the response.
func (s signer) sign(req *http.Request, body []byte, now time.Time) (string, error) {
	var raw [nonceBytes]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("rendezvous: nonce: %w", err)
	}
	nonce := hex.EncodeToString(raw[:])
	ts := strconv.FormatInt(now.UnixMilli(), 10)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderNonce, nonce)
	req.Header.Set(HeaderSignature, hex.EncodeToString(s.requestMAC(req.Method, req.URL.RequestURI(), ts, nonce, body)))
	return nonce, nil
}

// authError is why a request was refused. Its text goes to the server's
// log and back to the caller; it never includes key material or MACs.
type authError struct{ reason string }

func (e *authError) Error() string { return e.reason }

// verified is a request whose signature checked out.
type verified struct {
	nonce string
	at    time.Time
}

// verify checks req's signature over body in constant time, then its
// timestamp against skew. Replays are the caller's business (the nonce
// cache), after verify: only a correctly signed nonce may take a place in
// the cache, so strangers cannot fill it.
func (s signer) verify(req *http.Request, body []byte, now time.Time, skew time.Duration) (verified, error) {
	ts := req.Header.Get(HeaderTimestamp)
	nonce := req.Header.Get(HeaderNonce)
	sig := req.Header.Get(HeaderSignature)
	if ts == "" || nonce == "" || sig == "" {
		return verified{}, &authError{"unsigned request (missing " + HeaderTimestamp + ", " + HeaderNonce + " or " + HeaderSignature + ")"}
	}
	if err := checkNonce(nonce); err != nil {
		return verified{}, err
	}
	ms, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(ts) > 16 {
		return verified{}, &authError{"malformed timestamp"}
	}
	got, err := hex.DecodeString(sig)
	if err != nil || len(got) != sha256.Size {
		return verified{}, &authError{"malformed signature"}
	}
	if !hmac.Equal(got, s.requestMAC(req.Method, req.RequestURI, ts, nonce, body)) {
		return verified{}, &authError{"bad signature (wrong secret, or the request was altered)"}
	}
	at := time.UnixMilli(ms)
	if d := now.Sub(at); d > skew || d < -skew {
		return verified{}, &authError{fmt.Sprintf("timestamp off by %s, more than the allowed %s (stale or replayed request, or clocks out of sync)", d.Round(time.Second), skew)}
	}
	return verified{nonce: nonce, at: at}, nil
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
// request that carried nonce.
func (s signer) checkResponse(nonce string, status int, header http.Header, body []byte) error {
	got, err := hex.DecodeString(header.Get(HeaderSignature))
	if err != nil || len(got) != sha256.Size {
		return errUnsignedResponse
	}
	if !hmac.Equal(got, s.responseMAC(nonce, status, body)) {
		return errBadResponseSignature
	}
	return nil
}

var (
	errUnsignedResponse     = errors.New("response carries no valid signature: is this address really the tfyarn AM's rendezvous server?")
	errBadResponseSignature = errors.New("response signature does not match: wrong rendezvous secret, or not our AM")
)

func hexMAC(mac []byte) string { return hex.EncodeToString(mac) }
