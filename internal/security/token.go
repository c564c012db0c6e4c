package security

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Token kinds tfyarn handles by name.
const (
	KindAMRMToken          = "YARN_AM_RM_TOKEN"
	KindNMToken            = "NMToken"
	KindHDFSDelegation     = "HDFS_DELEGATION_TOKEN"
	KindRMDelegation       = "RM_DELEGATION_TOKEN"
	KindTimelineDelegation = "TIMELINE_DELEGATION_TOKEN"
)

// Token is a Hadoop security token (org.apache.hadoop.security.token.Token,
// TokenProto on the wire).
type Token struct {
	Identifier []byte
	Password   []byte
	Kind       string
	Service    string
}

// Fingerprint is a short, non-reversible name for the token's identifier,
// so logs can tell tokens apart without revealing them.
func (t Token) Fingerprint() string {
	sum := sha256.Sum256(t.Identifier)
	return hex.EncodeToString(sum[:6])
}

// String shows kind, service and fingerprint, never the secret bytes.
func (t Token) String() string {
	return fmt.Sprintf("Token{kind=%s service=%s id=sha256:%s}", t.Kind, t.Service, t.Fingerprint())
}

// GoString keeps %#v from dumping the password.
func (t Token) GoString() string { return t.String() }

// Format keeps every fmt verb (%v, %+v, %#v, %s, %x, %q) on String(), since
// %x on a struct would otherwise print the raw fields.
func (t Token) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(t.String())) }

// Clone returns a deep copy, so callers can't alias a stored token's bytes.
func (t Token) Clone() Token {
	t.Identifier = append([]byte(nil), t.Identifier...)
	t.Password = append([]byte(nil), t.Password...)
	return t
}
