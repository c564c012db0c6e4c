package rendezvous

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/tfyarn/tfyarn/internal/reqsign"
)

// The purposes (package reqsign) of the rendezvous's keys and MACs,
// versioned, so that there is room for a version 3.
const (
	requestPurpose   = "tfyarn-rendezvous-v2 request"
	responsePurpose  = "tfyarn-rendezvous-v2 response"
	containerPurpose = "tfyarn-rendezvous-v2 container"
	macKeyPurpose    = "tfyarn-rendezvous-v2 mac key"
	sealKeyPurpose   = "tfyarn-rendezvous-v2 seal key"
)

// ContainerKey is the key of one container's launcher: the AM hands it
// to that container only (in its credentials, under SecretAlias) and
// derives it again from the job's secret for every request that names
// the container. A launcher can therefore sign only as its own container,
// and the AM binds what it says to the task that container runs.
func ContainerKey(secret []byte, containerID string) []byte {
	return reqsign.DeriveKey(secret, containerPurpose+"\n"+containerID)
}

// keys are what one container's key gives: a MAC key for the signatures
// (package reqsign) and an AEAD (AES-256-GCM) that seals every body both
// ways, so tokens and stderr tails never cross the network in clear.
type keys struct {
	mac  []byte
	aead cipher.AEAD
}

func newKeys(containerKey []byte) (keys, error) {
	if err := checkSecret(containerKey); err != nil {
		return keys{}, err
	}
	return keysWithMAC(containerKey, macKey(containerKey))
}

func macKey(containerKey []byte) []byte { return reqsign.DeriveKey(containerKey, macKeyPurpose) }

// keysWithMAC completes keys whose MAC key is already derived: the server
// derives the cipher only for a request whose signature checked out.
func keysWithMAC(containerKey, mac []byte) (keys, error) {
	block, err := aes.NewCipher(reqsign.DeriveKey(containerKey, sealKeyPurpose))
	if err != nil {
		return keys{}, fmt.Errorf("rendezvous: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return keys{}, fmt.Errorf("rendezvous: %w", err)
	}
	return keys{mac: mac, aead: aead}, nil
}

// sealOverhead is what sealing adds to a body: the AEAD's nonce and tag.
const sealOverhead = 12 + 16

// seal encrypts and authenticates plain for the message described by ad.
func (k keys) seal(plain []byte, ad string) ([]byte, error) { return k.sealParts(ad, plain) }

// sealParts seals the parts joined, for the message described by ad. They
// are joined in the sealed body's own buffer and encrypted in place: a
// spec answer (145 KB at 5,000 tasks, once per launcher) is then copied
// once rather than joined into a buffer of its own first.
func (k keys) sealParts(ad string, parts ...[]byte) ([]byte, error) {
	n, size := k.aead.NonceSize(), 0
	for _, p := range parts {
		size += len(p)
	}
	out := make([]byte, n, n+size+k.aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		return nil, fmt.Errorf("rendezvous: nonce: %w", err)
	}
	for _, p := range parts {
		out = append(out, p...)
	}
	// The plaintext out[n:] and the ciphertext appended to out[:n] start
	// at the same byte, the one overlap cipher.AEAD allows.
	return k.aead.Seal(out[:n], out[:n], out[n:], []byte(ad)), nil
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

// requestAD binds a sealed request body to the request's signed fields
// (all but the body's digest, which is of the sealed body).
func requestAD(r reqsign.Request) string {
	return requestPurpose + "\n" + r.Method + "\n" + r.Target + "\n" + r.Signer + "\n" + r.Timestamp + "\n" + r.Nonce
}

// responseAD binds a sealed response body to the request it answers.
func responseAD(requestSig string, status int) string {
	return responsePurpose + "\n" + requestSig + "\n" + strconv.Itoa(status)
}

// signed is what the client keeps of a request it signed, to check the
// answer.
type signed struct {
	sig string
}

// sign seals body (nil: no body) for req, signs req as container's and
// returns the body to send.
func (k keys) sign(req *http.Request, container string, body []byte, now time.Time) ([]byte, signed, error) {
	r, err := reqsign.NewRequest(requestPurpose, req.Method, req.URL.RequestURI(), container, now)
	if err != nil {
		return nil, signed{}, fmt.Errorf("rendezvous: %w", err)
	}
	var wire []byte
	if body != nil {
		if wire, err = k.seal(body, requestAD(r)); err != nil {
			return nil, signed{}, err
		}
	}
	return wire, signed{sig: r.Sign(k.mac, wire, req.Header)}, nil
}

// signResponse is the signature of the answer with status and wire body
// to the request signed requestSig.
func (k keys) signResponse(requestSig string, status int, wire []byte) string {
	return reqsign.SignResponse(k.mac, responsePurpose, requestSig, status, wire)
}

// checkResponse verifies the server's signature on a response to the
// request signed as req, and opens its body.
func (k keys) checkResponse(req signed, status int, header http.Header, wire []byte) ([]byte, error) {
	if err := reqsign.CheckResponse(k.mac, responsePurpose, req.sig, status, header, wire); err != nil {
		if errors.Is(err, reqsign.ErrUnsignedResponse) {
			return nil, errUnsignedResponse
		}
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
	errUnsignedResponse     = fmt.Errorf("%w: is this address really the tfyarn AM's rendezvous server?", reqsign.ErrUnsignedResponse)
	errBadResponseSignature = fmt.Errorf("%w: wrong container key, or not our AM", reqsign.ErrBadResponseSignature)
)
