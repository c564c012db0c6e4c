package security

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// MIT's KEYRING ticket cache (src/lib/krb5/ccache/cc_keyring.c) keeps a
// cache as a kernel keyring with one key per credential. Names and key
// descriptions below are MIT's; the payloads are the FILE cache format's
// version 4 marshalling of a principal and of a credential.
const (
	keyringCollectionPrefix = "_krb_"              // a collection keyring, linked from the anchor
	keyringPersistentName   = "_krb"               // the collection inside a persistent keyring
	keyringPrimaryKey       = "krb_ccache:primary" // the collection's primary cache name
	keyringPrincipalKey     = "__krb5_princ__"     // the cache's default principal
	keyringTimeOffsetsKey   = "__krb5_time_offsets__"
	keyringIndexVersion     = 1
)

// Bounds on one keyring cache: the kernel's big_key holds at most 1 MiB,
// and a cache of thousands of credentials is not one kinit made.
const (
	maxKeyringPayload = 1 << 20
	maxKeyringKeys    = 4096
	maxKeyringCCache  = 16 << 20
)

// errNoKeyringCache is a KEYRING cache that does not exist (yet): what
// kinit would create, seen before kinit ran.
var errNoKeyringCache = errors.New("no such keyring cache")

// errKeyringExpired is a cache keyring the kernel expired: MIT sets its
// timeout to the last end time of its credentials.
var errKeyringExpired = errors.New("the cache keyring expired with its tickets")

// errBadKeyringName is a KEYRING: name MIT's libkrb5 would refuse too.
var errBadKeyringName = errors.New("not a KEYRING cache name")

// keyringResidual is a KEYRING: name split as MIT does:
// anchor:collection:subsidiary, anchor:collection, or collection alone
// (anchor "legacy"). An empty Subsidiary means the collection's primary
// cache.
type keyringResidual struct {
	Anchor, Collection, Subsidiary string
}

func parseKeyringResidual(residual string) keyringResidual {
	anchor, rest, ok := strings.Cut(residual, ":")
	if !ok {
		return keyringResidual{Anchor: "legacy", Collection: residual}
	}
	collection, sub, _ := strings.Cut(rest, ":")
	return keyringResidual{Anchor: anchor, Collection: collection, Subsidiary: sub}
}

func (r keyringResidual) String() string {
	s := "KEYRING:" + r.Anchor + ":" + r.Collection
	if r.Subsidiary != "" {
		s += ":" + r.Subsidiary
	}
	return s
}

// keyringCCache is one cache keyring's content as read from the kernel,
// each payload checked to be one whole marshalled item.
type keyringCCache struct {
	Principal   []byte   // __krb5_princ__
	TimeOffsets []byte   // __krb5_time_offsets__ (8 bytes), nil when absent
	Credentials [][]byte // every other key
}

// fileFormat lays the cache out as a version 4 FILE ccache, which gokrb5
// reads: the keyring's payloads already are that format's marshalling, and
// its time offsets are the header's KDC offset field.
func (c keyringCCache) fileFormat() ([]byte, error) {
	b := []byte{5, 4}
	if c.TimeOffsets != nil {
		b = binary.BigEndian.AppendUint16(b, 12) // one field: tag, length, 8 bytes
		b = binary.BigEndian.AppendUint16(b, 1)  // the KDC time offset
		b = binary.BigEndian.AppendUint16(b, 8)
		b = append(b, c.TimeOffsets...)
	} else {
		b = binary.BigEndian.AppendUint16(b, 0)
	}
	b = append(b, c.Principal...)
	for _, cred := range c.Credentials {
		if len(b)+len(cred) > maxKeyringCCache {
			return nil, fmt.Errorf("the cache holds more than %d bytes", maxKeyringCCache)
		}
		b = append(b, cred...)
	}
	return b, nil
}

// parseKeyringIndex reads a collection's krb_ccache:primary payload: a
// big-endian version (1) and the length-prefixed name of the primary cache.
func parseKeyringIndex(b []byte) (string, error) {
	if len(b) < 8 {
		return "", fmt.Errorf("%s is %d bytes, not a version and a name", keyringPrimaryKey, len(b))
	}
	if v := binary.BigEndian.Uint32(b); v != keyringIndexVersion {
		return "", fmt.Errorf("%s has version %d; tfyarn knows version %d", keyringPrimaryKey, v, keyringIndexVersion)
	}
	n := binary.BigEndian.Uint32(b[4:])
	if uint64(n) > uint64(len(b)-8) {
		return "", fmt.Errorf("%s names %d bytes but holds %d", keyringPrimaryKey, n, len(b)-8)
	}
	name := string(b[8 : 8+n])
	if name == "" || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("%s holds no usable name", keyringPrimaryKey)
	}
	return name, nil
}

// v4Reader walks the FILE ccache version 4 marshalling (big endian),
// refusing any length or count the bytes left could not hold.
type v4Reader struct {
	b   []byte
	p   int
	err error
}

func (r *v4Reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

func (r *v4Reader) take(n uint64, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.p) {
		r.fail("%s: %d bytes needed at offset %d, %d left", what, n, r.p, len(r.b)-r.p)
		return nil
	}
	r.p += int(n)
	return r.b[r.p-int(n) : r.p]
}

func (r *v4Reader) u16(what string) uint16 {
	if x := r.take(2, what); x != nil {
		return binary.BigEndian.Uint16(x)
	}
	return 0
}

func (r *v4Reader) u32(what string) uint32 {
	if x := r.take(4, what); x != nil {
		return binary.BigEndian.Uint32(x)
	}
	return 0
}

func (r *v4Reader) data(what string) {
	n := r.u32(what + " length")
	r.take(uint64(n), what)
}

// count reads a 4-byte count of items at least minSize bytes each, refusing
// one the bytes left could not hold.
func (r *v4Reader) count(what string, minSize int) uint32 {
	n := r.u32(what + " count")
	if r.err == nil && uint64(n)*uint64(minSize) > uint64(len(r.b)-r.p) {
		r.fail("%s count %d exceeds the %d bytes left", what, n, len(r.b)-r.p)
		return 0
	}
	return n
}

func (r *v4Reader) principal(what string) {
	r.u32(what + " name type")
	n := r.count(what+" component", 4)
	r.data(what + " realm")
	for i := uint32(0); i < n && r.err == nil; i++ {
		r.data(what + " component")
	}
}

func (r *v4Reader) credential() {
	r.principal("client")
	r.principal("server")
	r.u16("key type")
	r.data("key")
	r.take(4*4, "times")
	r.take(1, "is_skey")
	r.u32("ticket flags")
	for _, list := range []string{"address", "authdata"} {
		n := r.count(list, 6)
		for i := uint32(0); i < n && r.err == nil; i++ {
			r.u16(list + " type")
			r.data(list)
		}
	}
	r.data("ticket")
	r.data("second ticket")
}

// wholeV4 checks that b is exactly one item as parse reads it (MIT ignores
// trailing bytes; laid end to end in a file they would be read as the next
// credential, so here they are an error).
func wholeV4(b []byte, what string, parse func(*v4Reader)) error {
	r := &v4Reader{b: b}
	parse(r)
	if r.err != nil {
		return fmt.Errorf("%s: %w", what, r.err)
	}
	if r.p != len(b) {
		return fmt.Errorf("%s: %d bytes after its end", what, len(b)-r.p)
	}
	return nil
}

func checkKeyringPrincipal(b []byte) error {
	return wholeV4(b, keyringPrincipalKey, func(r *v4Reader) { r.principal("principal") })
}

func checkKeyringCredential(b []byte, desc string) error {
	return wholeV4(b, "credential "+desc, (*v4Reader).credential)
}

func checkKeyringTimeOffsets(b []byte) error {
	if len(b) != 8 {
		return fmt.Errorf("%s is %d bytes, not 8", keyringTimeOffsetsKey, len(b))
	}
	return nil
}
