package reqsign

import (
	"crypto/hmac"
	"crypto/sha256"
)

// MinKeySize is the shortest root key (the job's rendezvous secret, the
// status key) our processes accept: a truncated or empty key would
// otherwise silently weaken every signature made under it.
const MinKeySize = 16

// DeriveKey returns the key for purpose under parent: HMAC-SHA256 of the
// purpose string keyed with parent. Each use of a key of ours has its own
// purpose string (a versioned domain, "tfyarn-… v2 …"), so that a key or
// a MAC of one use is never valid in another.
func DeriveKey(parent []byte, purpose string) []byte {
	m := hmac.New(sha256.New, parent)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}
