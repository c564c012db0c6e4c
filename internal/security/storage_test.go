package security

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func smallCredentials() *Credentials {
	c := NewCredentials()
	c.AddToken("a", Token{Identifier: []byte{0x01}, Password: []byte{0x02, 0x03}, Kind: "K", Service: "S"})
	c.AddSecret("s", []byte{0xff})
	return c
}

// Built by hand from Credentials.write and Token.write.
var smallV0 = []byte{
	'H', 'D', 'T', 'S', 0x00,
	0x01,      // one token
	0x01, 'a', // Text alias
	0x01, 0x01, // identifier
	0x02, 0x02, 0x03, // password
	0x01, 'K', // Text kind
	0x01, 'S', // Text service
	0x01,      // one secret
	0x01, 's', // Text alias
	0x01, 0xff, // key
}

// Built by hand from Security.proto: varint length, then CredentialsProto.
var smallV1 = []byte{
	'H', 'D', 'T', 'S', 0x01,
	0x1c,       // message length 28
	0x0a, 0x12, // tokens: KV of 18 bytes
	0x0a, 0x01, 'a', // alias
	0x12, 0x0d, // token: TokenProto of 13 bytes
	0x0a, 0x01, 0x01, // identifier
	0x12, 0x02, 0x02, 0x03, // password
	0x1a, 0x01, 'K', // kind
	0x22, 0x01, 'S', // service
	0x12, 0x06, // secrets: KV of 6 bytes
	0x0a, 0x01, 's', // alias
	0x1a, 0x01, 0xff, // secret
}

// requireSameCredentials compares content and order.
func requireSameCredentials(t *testing.T, want, got *Credentials) {
	t.Helper()
	require.Equal(t, len(want.tokens), len(got.tokens), "token count")
	for i, w := range want.tokens {
		g := got.tokens[i]
		require.Equal(t, w.Alias, g.Alias)
		require.True(t, bytes.Equal(w.Token.Identifier, g.Token.Identifier), "identifier of %q", w.Alias)
		require.True(t, bytes.Equal(w.Token.Password, g.Token.Password), "password of %q", w.Alias)
		require.Equal(t, w.Token.Kind, g.Token.Kind)
		require.Equal(t, w.Token.Service, g.Token.Service)
	}
	require.Equal(t, want.SecretAliases(), got.SecretAliases())
	for _, a := range want.SecretAliases() {
		wk, _ := want.Secret(a)
		gk, _ := got.Secret(a)
		require.True(t, bytes.Equal(wk, gk), "secret %q", a)
	}
}

// sortedLike reorders got's entries into want's alias order, for data
// written by Java whose HashMap order is arbitrary.
func sortedLike(want, got *Credentials) *Credentials {
	out := NewCredentials()
	for _, e := range want.tokens {
		if t, ok := got.Token(e.Alias); ok {
			out.AddToken(e.Alias, t)
		}
	}
	for _, a := range want.SecretAliases() {
		if k, ok := got.Secret(a); ok {
			out.AddSecret(a, k)
		}
	}
	return out
}

func TestMarshalGolden(t *testing.T) {
	c := smallCredentials()
	require.Equal(t, smallV0, c.Marshal())
	v1, err := c.MarshalFormat(FormatProtobuf)
	require.NoError(t, err)
	require.Equal(t, smallV1, v1)

	var buf bytes.Buffer
	n, err := c.WriteTo(&buf)
	require.NoError(t, err)
	require.Equal(t, int64(len(smallV0)), n)
	require.Equal(t, smallV0, buf.Bytes())

	for _, golden := range [][]byte{smallV0, smallV1} {
		got, err := ParseCredentials(golden)
		require.NoError(t, err)
		requireSameCredentials(t, c, got)
	}
	_, err = c.MarshalFormat(Format(7))
	require.ErrorContains(t, err, "unknown(v7)")
}

func TestRoundTripFixture(t *testing.T) {
	want := fixtureCredentials()
	for _, f := range []Format{FormatWritable, FormatProtobuf} {
		t.Run(f.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "creds")
			require.NoError(t, want.WriteFile(path, f))
			st, err := os.Stat(path)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
			got, err := ReadCredentialsFile(path)
			require.NoError(t, err)
			requireSameCredentials(t, want, got)
		})
	}
}

// The testdata files were written by Hadoop 3.4.2 itself
// (CredentialsTool write), so these run without Java.
func TestReadHadoopWrittenFiles(t *testing.T) {
	want := fixtureCredentials()
	for _, name := range []string{"hadoop-3.4.2-v0.hdts", "hadoop-3.4.2-v1.hdts"} {
		t.Run(name, func(t *testing.T) {
			got, err := ReadCredentialsFile(filepath.Join("testdata", name))
			require.NoError(t, err)
			requireSameCredentials(t, want, sortedLike(want, got))
			require.Equal(t, 2, got.NumTokens())
			require.Equal(t, 1, got.NumSecrets())
		})
	}
}

func TestParseErrors(t *testing.T) {
	hdr := func(v byte, rest ...byte) []byte { return append([]byte{'H', 'D', 'T', 'S', v}, rest...) }
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "security: credentials: 0 bytes is too short"},
		{"bad magic", []byte("HDTX\x00\x00\x00"), `bad header "HDTX"`},
		{"bad version", hdr(2, 0, 0), "unknown token storage version 2"},
		{"identifier too long", hdr(0, 0x01, 0x05, 'a', 'l', 'i', 'a', 's', 0x8c, 0xff, 0xff, 0xff, 0xff),
			`security: credentials: token "alias": identifier length 4294967295 exceeds limit`},
		{"negative password", hdr(0, 0x01, 0x01, 'a', 0x00, 0xff, 0, 0, 0, 0),
			`token "a": password length -1 is negative`},
		{"truncated kind", hdr(0, 0x01, 0x01, 'a', 0x00, 0x00, 0x05, 'K', 0, 0, 0),
			`token "a": kind length 5 exceeds the 4 bytes left`},
		{"truncated vint", hdr(0, 0x01, 0x01, 'a', 0x00, 0x00, 0x00, 0x8e),
			`token "a": service length: truncated vint`},
		{"token count beyond data", hdr(0, 0x7f, 0, 0, 0, 0, 0), "token count length 127 exceeds limit"},
		{"huge alias", hdr(0, 0x01, 0x8c, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0), "token #1: alias length 2147483647 exceeds limit"},
		{"secret count missing", hdr(0, 0x00), "secret count length: truncated vint"},
		{"secret key short", hdr(0, 0x00, 0x01, 0x01, 's', 0x03, 0xff), `secret "s": key length 3 exceeds the 1 bytes left`},
		{"v1 length beyond data", hdr(1, 0x7f, 0x0a), "message length 127 exceeds the 1 bytes left"},
		{"v1 bad varint", hdr(1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), "message length"},
		{"v1 kv without alias", hdr(1, 0x04, 0x0a, 0x02, 0x1a, 0x00), "token #1: missing required alias"},
		{"v1 token missing kind", hdr(1, 0x0f, 0x0a, 0x0d, 0x0a, 0x01, 'a', 0x12, 0x08,
			0x0a, 0x00, 0x12, 0x00, 0x22, 0x02, 'S', 'S'), `token "a": missing required kind`},
		{"v1 alias wrong wire type", hdr(1, 0x04, 0x0a, 0x02, 0x08, 0x01), "token #1: alias: wrong wire type 0"},
		{"v1 truncated field", hdr(1, 0x03, 0x0a, 0x05, 0x0a), "message: field 1: unexpected EOF"},
		{"v1 truncated nested field", hdr(1, 0x04, 0x0a, 0x02, 0x0a, 0x05), "token #1: field 1: unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCredentials(tt.in)
			require.ErrorContains(t, err, tt.want)
			var fe *FormatError
			require.True(t, errors.As(err, &fe), "%T", err)
		})
	}
}

func TestProtoLeniency(t *testing.T) {
	// Unknown fields are skipped; an entry without a token gives an empty
	// token (as Java's getToken() default instance does); a secret entry
	// without a secret gives an empty key; trailing bytes are ignored.
	in := []byte{'H', 'D', 'T', 'S', 0x01,
		0x0c,
		0x0a, 0x03, 0x0a, 0x01, 'a', // token "a" without token
		0x12, 0x03, 0x0a, 0x01, 's', // secret "s" without secret
		0x28, 0x07, // unknown varint field 5
		0xde, 0xad} // trailing
	c, err := ParseCredentials(in)
	require.NoError(t, err)
	tok, ok := c.Token("a")
	require.True(t, ok)
	require.Empty(t, tok.Identifier)
	key, ok := c.Secret("s")
	require.True(t, ok)
	require.Empty(t, key)
}

func TestReadCredentialsFileErrors(t *testing.T) {
	_, err := ReadCredentialsFile(filepath.Join(t.TempDir(), "missing"))
	require.ErrorContains(t, err, "security: credentials: open")
	path := filepath.Join(t.TempDir(), "bad")
	require.NoError(t, os.WriteFile(path, []byte("HDTS\x09"), 0o600))
	_, err = ReadCredentialsFile(path)
	require.ErrorContains(t, err, "unknown token storage version 9")
	require.ErrorContains(t, err, path)
}
