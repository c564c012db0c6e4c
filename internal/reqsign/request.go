package reqsign

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// The headers of a signed request.
const (
	// HeaderSigner names whose key signs the request. Every signing key
	// of ours is a container's (the launcher's own, or the one the AM
	// uses to call that launcher), hence the header's name.
	HeaderSigner    = "X-Tfyarn-Container"
	HeaderTimestamp = "X-Tfyarn-Timestamp" // Unix milliseconds
	HeaderNonce     = "X-Tfyarn-Nonce"     // nonceBytes random bytes, hex
	// HeaderContentSHA256 is the SHA-256 of the body as sent, hex: the
	// signature covers it, so the receiver checks the signature before it
	// reads a byte of the body.
	HeaderContentSHA256 = "X-Tfyarn-Content-Sha256"
	HeaderSignature     = "X-Tfyarn-Signature" // HMAC-SHA256, hex
)

// Bounds of the headers' form.
const (
	nonceBytes = 16
	// maxSignerLen bounds a signer's name (a YARN container id is about
	// 40 bytes).
	maxSignerLen       = 128
	maxTimestampDigits = 16
)

// Request is what a request's signature covers: everything its receiver
// acts on. Fields are newline-separated in the signed message and none
// can hold a newline (the purpose is a constant, the method a token, the
// target an escaped request URI, the signer printable ASCII without
// spaces, the others digits or hex), so no two requests share one.
type Request struct {
	// Purpose is the scheme and direction, a domain string both ends know:
	// never sent.
	Purpose string
	Method  string
	// Target is the request URI as sent: path and query.
	Target    string
	Signer    string
	Timestamp string // Unix milliseconds, decimal
	Nonce     string
	Digest    string // SHA-256 of the body as sent, hex
}

// NewRequest starts the signature of a request that signer sends at now,
// with a fresh nonce; Sign completes it once the body is known.
func NewRequest(purpose, method, target, signer string, now time.Time) (Request, error) {
	var nonce [nonceBytes]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return Request{}, fmt.Errorf("reqsign: nonce: %w", err)
	}
	return Request{
		Purpose: purpose, Method: method, Target: target, Signer: signer,
		Timestamp: strconv.FormatInt(now.UnixMilli(), 10),
		Nonce:     hex.EncodeToString(nonce[:]),
	}, nil
}

// Sign records the digest of body (nil: none) in r, sets the signature
// headers in h and returns the signature (hex), which the answer is bound
// to.
func (r *Request) Sign(key, body []byte, h http.Header) string {
	r.Digest = Digest(body)
	sig := r.signature(key)
	h.Set(HeaderSigner, r.Signer)
	h.Set(HeaderTimestamp, r.Timestamp)
	h.Set(HeaderNonce, r.Nonce)
	h.Set(HeaderContentSHA256, r.Digest)
	h.Set(HeaderSignature, sig)
	return sig
}

// signature is r's signature with key, hex.
func (r Request) signature(key []byte) string { return hex.EncodeToString(r.mac(key)) }

// mac is HMAC-SHA256 with key of r's canonical message.
func (r Request) mac(key []byte) []byte {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s\n%s\n%s\n%s\n%s\n%s\n%s", r.Purpose, r.Method, r.Target, r.Signer, r.Timestamp, r.Nonce, r.Digest)
	return m.Sum(nil)
}

// Digest is the SHA-256 of body, hex, as HeaderContentSHA256 carries it.
func Digest(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// Error is why a request was refused. Its text goes to the receiver's log
// and back to the caller: it never holds key material or MACs.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

// Signed is a received request's signature headers, checked for form.
type Signed struct {
	Request
	// Signature is the request's signature as received (hex): a signed
	// answer is bound to it.
	Signature string
	// At is when the signer says it sent the request.
	At       time.Time
	received []byte // the signature's bytes
}

// Parse reads req's signature headers for purpose, checking their form
// only: cheap, before any key is derived. The method and the target are
// the request's own, as received.
func Parse(purpose string, req *http.Request) (Signed, error) {
	h := req.Header
	s := Signed{
		Request: Request{
			Purpose: purpose, Method: req.Method, Target: req.RequestURI,
			Signer: h.Get(HeaderSigner), Timestamp: h.Get(HeaderTimestamp), Nonce: h.Get(HeaderNonce),
			Digest: h.Get(HeaderContentSHA256),
		},
		Signature: h.Get(HeaderSignature),
	}
	if s.Signer == "" || s.Timestamp == "" || s.Nonce == "" || s.Digest == "" || s.Signature == "" {
		return s, &Error{"unsigned request (missing " + HeaderSigner + ", " + HeaderTimestamp + ", " + HeaderNonce + ", " + HeaderContentSHA256 + " or " + HeaderSignature + ")"}
	}
	if !validSigner(s.Signer) {
		return s, &Error{"malformed container id"}
	}
	if !isHexOf(s.Nonce, nonceBytes) {
		return s, &Error{"malformed nonce"}
	}
	ms, err := strconv.ParseInt(s.Timestamp, 10, 64)
	if err != nil || len(s.Timestamp) > maxTimestampDigits {
		return s, &Error{"malformed timestamp"}
	}
	s.At = time.UnixMilli(ms)
	if !isHexOf(s.Digest, sha256.Size) {
		return s, &Error{"malformed content digest"}
	}
	if s.received, err = hex.DecodeString(s.Signature); err != nil || len(s.received) != sha256.Size {
		return s, &Error{"malformed signature"}
	}
	return s, nil
}

// validSigner allows printable ASCII without spaces, which keeps the
// signed message unambiguous and a log line readable.
func validSigner(s string) bool {
	for _, r := range s {
		if r <= ' ' || r >= 0x7f {
			return false
		}
	}
	return s != "" && len(s) <= maxSignerLen
}

func isHexOf(s string, n int) bool {
	if len(s) != 2*n {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// CheckBody compares the body as received with the signed digest.
func (s Signed) CheckBody(body []byte) error {
	if Digest(body) != s.Digest {
		return &Error{"body does not match its signed digest (altered in transit)"}
	}
	return nil
}

// Verifier checks signed requests for one receiver: their MAC, their
// time, and that each is used once.
type Verifier struct {
	skew   time.Duration
	nonces *replayCache
}

// NewVerifier returns a Verifier that allows skew between the signer's
// clock and the receiver's and remembers at most maxNonces nonces (those
// of the requests accepted within the last 2·skew or so).
func NewVerifier(skew time.Duration, maxNonces int) *Verifier {
	return &Verifier{skew: skew, nonces: newReplayCache(maxNonces)}
}

// Verify checks s's MAC under key in constant time, then its timestamp
// against now, then that its nonce is new. The nonce takes a place in the
// cache only then: a stranger, who cannot sign, cannot fill it.
func (v *Verifier) Verify(s Signed, key []byte, now time.Time) error {
	if !hmac.Equal(s.received, s.mac(key)) {
		return &Error{"bad signature (wrong key, or the request was altered)"}
	}
	if d := now.Sub(s.At); d > v.skew || d < -v.skew {
		return &Error{fmt.Sprintf("timestamp off by %s, more than the allowed %s (stale or replayed request, or clocks out of sync)", d.Round(time.Second), v.skew)}
	}
	// After At+skew the timestamp check refuses the request by itself,
	// so the cache may forget its nonce then.
	return v.nonces.add(s.Nonce, now, s.At.Add(v.skew+time.Second))
}
