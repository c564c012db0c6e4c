package reqsign

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
)

// SignResponse returns the signature (hex, for HeaderSignature) of an
// answer with status and body (as sent) to the request whose signature
// was requestSig. Through requestSig it covers everything the request
// said: an old signed answer cannot be passed off as the answer to
// another request, nor to another endpoint.
func SignResponse(key []byte, purpose, requestSig string, status int, body []byte) string {
	return hex.EncodeToString(responseMAC(key, purpose, requestSig, status, Digest(body)))
}

func responseMAC(key []byte, purpose, requestSig string, status int, digest string) []byte {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s\n%s\n%d\n%s", purpose, requestSig, status, digest)
	return m.Sum(nil)
}

// Why an answer is not believed.
var (
	ErrUnsignedResponse     = errors.New("response carries no valid signature")
	ErrBadResponseSignature = errors.New("response signature does not match")
)

// CheckResponse checks, in constant time, the signature in h of an answer
// with status and body (as received) to the request signed requestSig.
func CheckResponse(key []byte, purpose, requestSig string, status int, h http.Header, body []byte) error {
	got, err := hex.DecodeString(h.Get(HeaderSignature))
	if err != nil || len(got) != sha256.Size {
		return ErrUnsignedResponse
	}
	if !hmac.Equal(got, responseMAC(key, purpose, requestSig, status, Digest(body))) {
		return ErrBadResponseSignature
	}
	return nil
}
