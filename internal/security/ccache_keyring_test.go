package security

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/stretchr/testify/require"
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

// splitFileCCache takes a version 4 FILE ccache apart into what a cache
// keyring holds: the principal's and each credential's marshalling.
func splitFileCCache(t testing.TB, b []byte) keyringCCache {
	t.Helper()
	if len(b) < 4 || b[0] != 5 || b[1] != 4 {
		t.Fatalf("not a version 4 ccache")
	}
	r := &v4Reader{b: b, p: 2}
	r.take(uint64(r.u16("header length")), "header")
	start := r.p
	r.principal("principal")
	c := keyringCCache{Principal: b[start:r.p]}
	for r.err == nil && r.p < len(b) {
		start = r.p
		r.credential()
		c.Credentials = append(c.Credentials, b[start:r.p])
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return c
}

func TestKeyringResidual(t *testing.T) {
	for in, want := range map[string]keyringResidual{
		"persistent:1000":           {"persistent", "1000", ""},
		"persistent:":               {"persistent", "", ""},
		"session:team:krb_ccache_x": {"session", "team", "krb_ccache_x"},
		"user:alice":                {"user", "alice", ""},
		"process:a:b":               {"process", "a", "b"},
		"mycache":                   {"legacy", "mycache", ""},
	} {
		require.Equal(t, want, parseKeyringResidual(in), in)
	}
	require.Equal(t, "KEYRING:session:team:krb_ccache_x", parseKeyringResidual("session:team:krb_ccache_x").String())
}

// TestKeyringPayloads: every length and count in a key's payload is
// checked against the bytes there, and a payload is exactly one item.
func TestKeyringPayloads(t *testing.T) {
	c := splitFileCCache(t, syntheticCCache(t, 2))
	require.Len(t, c.Credentials, 1)
	require.NoError(t, checkKeyringPrincipal(c.Principal))
	cred := c.Credentials[0]
	require.NoError(t, checkKeyringCredential(cred, "krbtgt"))

	require.ErrorContains(t, checkKeyringCredential(cred[:len(cred)-1], "krbtgt"), "second ticket length: 4 bytes needed")
	require.ErrorContains(t, checkKeyringCredential(append(slices.Clone(cred), 0), "krbtgt"), "credential krbtgt: 1 bytes after its end")
	require.ErrorContains(t, checkKeyringPrincipal(append(slices.Clone(c.Principal), 1, 2)), "__krb5_princ__: 2 bytes after its end")

	// A count of 2^32-1 components or addresses is refused before any
	// allocation, by what the bytes left could hold.
	huge := slices.Clone(c.Principal)
	binary.BigEndian.PutUint32(huge[4:], 0xffffffff)
	require.ErrorContains(t, checkKeyringPrincipal(huge), "principal component count 4294967295 exceeds")
	var w ccacheWriter
	w.principal(1, "EXAMPLE.COM", "alice")
	w.principal(2, "EXAMPLE.COM", "krbtgt", "EXAMPLE.COM")
	w.u16(17)
	w.data(make([]byte, 16))
	w.Write(make([]byte, 4*4+1+4))
	w.u32(0xffffffff) // addresses
	require.ErrorContains(t, checkKeyringCredential(w.Bytes(), "x"), "address count 4294967295 exceeds the 0 bytes left")

	require.NoError(t, checkKeyringTimeOffsets(make([]byte, 8)))
	require.ErrorContains(t, checkKeyringTimeOffsets(make([]byte, 9)), "__krb5_time_offsets__ is 9 bytes, not 8")
}

func TestKeyringIndex(t *testing.T) {
	index := func(version uint32, name string, extra int) []byte {
		b := binary.BigEndian.AppendUint32(nil, version)
		b = binary.BigEndian.AppendUint32(b, uint32(len(name)+extra))
		return append(b, name...)
	}
	name, err := parseKeyringIndex(index(1, "krb_ccache_Ab3dE9fG", 0))
	require.NoError(t, err)
	require.Equal(t, "krb_ccache_Ab3dE9fG", name)
	_, err = parseKeyringIndex(index(2, "x", 0))
	require.EqualError(t, err, "krb_ccache:primary has version 2; tfyarn knows version 1")
	_, err = parseKeyringIndex(index(1, "x", 1))
	require.EqualError(t, err, "krb_ccache:primary names 2 bytes but holds 1")
	_, err = parseKeyringIndex(index(1, "", 0))
	require.EqualError(t, err, "krb_ccache:primary holds no usable name")
	_, err = parseKeyringIndex([]byte{0, 0, 0, 1})
	require.EqualError(t, err, "krb_ccache:primary is 4 bytes, not a version and a name")
}

// TestKeyringFileFormat: the keyring's parts laid out as a FILE cache are
// what gokrb5 reads, time offsets in the header.
func TestKeyringFileFormat(t *testing.T) {
	c := splitFileCCache(t, syntheticCCache(t, 2))
	c.TimeOffsets = []byte{0, 0, 0, 7, 0, 0, 0, 0}
	b, err := c.fileFormat()
	require.NoError(t, err)
	require.NoError(t, checkCCacheCounts(b))
	cc := new(credentials.CCache)
	require.NoError(t, cc.Unmarshal(b))
	require.Equal(t, "alice", cc.DefaultPrincipal.PrincipalName.PrincipalNameString())
	require.Len(t, cc.Credentials, 1)
	require.Equal(t, "krbtgt/EXAMPLE.COM", cc.Credentials[0].Server.PrincipalName.PrincipalNameString())
	require.Len(t, cc.Credentials[0].Addresses, 2)
}

// FuzzKeyringCredential feeds arbitrary bytes as one credential key's
// payload (and as the principal key's): what the checks accept, gokrb5
// reads as exactly one credential of a cache, without a panic; what they
// refuse never reaches gokrb5.
func FuzzKeyringCredential(f *testing.F) {
	seeds := []keyringCCache{splitFileCCache(f, syntheticCCache(f, 0)), splitFileCCache(f, syntheticCCache(f, 2))}
	for _, s := range seeds {
		for _, cred := range s.Credentials {
			f.Add(cred, s.Principal)
		}
	}
	f.Add([]byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff}, []byte{})
	alice := seeds[0].Principal
	f.Fuzz(func(t *testing.T, cred, princ []byte) {
		if checkKeyringPrincipal(princ) != nil {
			princ = alice
		}
		if err := checkKeyringCredential(cred, "fuzz"); err != nil {
			return
		}
		b, err := keyringCCache{Principal: princ, Credentials: [][]byte{cred}}.fileFormat()
		if err != nil {
			t.Fatal(err)
		}
		cc, err := safeCall(func() (*credentials.CCache, error) {
			if err := checkCCacheCounts(b); err != nil {
				return nil, err
			}
			cc := new(credentials.CCache)
			return cc, cc.Unmarshal(b)
		})
		if err != nil {
			t.Fatalf("a checked credential does not parse: %v", err)
		}
		if len(cc.Credentials) != 1 {
			t.Fatalf("one checked credential parsed as %d", len(cc.Credentials))
		}
	})
}
