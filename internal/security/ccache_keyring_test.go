package security

import (
	"crypto/rand"
	"encoding/hex"
	"testing"
)

// randomName is a fresh keyring or cache name part, so that tests sharing
// the session keyring never meet.
func randomName(t testing.TB) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
