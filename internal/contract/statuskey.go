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
// client can prove itself to the AM's StatusPath. The key never travels
// itself: the AM's endpoints take values derived from it.
const (
	// StatusKeyAlias names the key among the AM's credentials' secrets.
	StatusKeyAlias = "tfyarn.status.key"
	// StatusKeyName is the key's file in the job's staging directory.
	StatusKeyName = "status.key"
	// StatusKeySize is the length of the keys NewStatusKey makes.
	StatusKeySize = 32
	// HeaderStatusAuth carries StatusBearer(key) on a request for
	// StatusPath.
	HeaderStatusAuth = "X-Tfyarn-Status-Auth"
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
// status key.
const (
	statusBearerPurpose = "tfyarn status page v1"
	webPathPurpose      = "tfyarn web ui v1"
)

// StatusBearer is what a client sends in HeaderStatusAuth: a bearer
// (reqsign.Bearer), not a signed request, since the client may be another
// tfyarn version than the job's AM.
func StatusBearer(key []byte) string {
	return reqsign.Bearer(key, statusBearerPurpose)
}

// StatusBearerMatches reports, in constant time, whether got is
// StatusBearer(key).
func StatusBearerMatches(key []byte, got string) bool {
	return reqsign.BearerMatches(got, StatusBearer(key))
}

// WebPathToken is the web UI's path element after ProxiedPrefix.
func WebPathToken(key []byte) string {
	return base64.RawURLEncoding.EncodeToString(reqsign.DeriveKey(key, webPathPurpose))
}
