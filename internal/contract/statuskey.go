package contract

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/tfyarn/tfyarn/internal/reqsign"
)

// The job's status key: a random secret the client makes at submission.
// It reaches the AM in its container's credentials (StatusKeyAlias) and
// stays readable to the job's owner in the staging directory
// (StatusKeyName, mode 0600 in the 0700 directory), so only the owner's
// client can sign a request to the AM's StatusPath. The key never travels
// itself: the AM's endpoints take values derived from it.
const (
	// StatusKeyAlias names the key among the AM's credentials' secrets.
	StatusKeyAlias = "tfyarn.status.key"
	// StatusKeyName is the key's file in the job's staging directory.
	StatusKeyName = "status.key"
	// StatusKeySize is the length of the keys NewStatusKey makes.
	StatusKeySize = 32
	// ProxiedPrefix starts the path of the AM's web UI: ProxiedPrefix +
	// WebPathToken(key) + "/" is what the AM registers as its tracking URL,
	// so only the ResourceManager's web proxy (which reads it from the
	// application report) and those YARN lets view the application's full
	// report can address the page.
	ProxiedPrefix = "/proxied/"
	// minStatusKeySize refuses keys too short to resist guessing.
	minStatusKeySize = reqsign.MinKeySize
)

// NewStatusKey returns StatusKeySize random bytes from the OS's CSPRNG.
func NewStatusKey() ([]byte, error) {
	b := make([]byte, StatusKeySize)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("contract: generating the status key: %w", err)
	}
	return b, nil
}

// CheckStatusKey refuses a key too short to resist guessing (a truncated
// file, say).
func CheckStatusKey(key []byte) error {
	if len(key) < minStatusKeySize {
		return fmt.Errorf("contract: the status key is %d bytes, want at least %d", len(key), minStatusKeySize)
	}
	return nil
}

// The purposes (package reqsign) of what the AM's endpoints take from the
// status key: the signing key of the owner's status requests and of the
// AM's answers, and the web UI's path.
const (
	statusSigningPurpose = "tfyarn status signing v2"
	webPathPurpose       = "tfyarn web ui v1"
	// StatusRequestPurpose and StatusAnswerPurpose are the reqsign purposes
	// of a status request and of the AM's answer to it.
	StatusRequestPurpose = "tfyarn status request v2"
	StatusAnswerPurpose  = "tfyarn status answer v2"
)

// StatusSigningKey is the key, under the job's status key, that signs the
// owner's requests for StatusPath (reqsign.Request, Signer the application
// id) and the AM's answers to them (reqsign.SignResponse): a fresh,
// signed request each time, and an answer the client checks, instead of a
// secret that travels.
func StatusSigningKey(key []byte) []byte {
	return reqsign.DeriveKey(key, statusSigningPurpose)
}

// WebPathToken is the web UI's path element after ProxiedPrefix.
func WebPathToken(key []byte) string {
	return base64.RawURLEncoding.EncodeToString(reqsign.DeriveKey(key, webPathPurpose))
}
