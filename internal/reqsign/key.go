package reqsign

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
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

// Bearer is the proof of holding key, for purpose, that a caller sends
// whole on every request: hex of DeriveKey(key, purpose). It is for the
// one caller that cannot sign: the owner's client asking the AM for the
// job's status, which may be another tfyarn version than the AM's (a
// signed request's form may change between versions; the bearer's never
// does). Whoever reads it on the wire can use it: it grants only what
// the owner's plain-HTTP status replies show such a reader anyway.
func Bearer(key []byte, purpose string) string {
	return hex.EncodeToString(DeriveKey(key, purpose))
}

// BearerMatches compares a received bearer with the expected one in
// constant time.
func BearerMatches(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
