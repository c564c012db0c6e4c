package security

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCredentialsOps(t *testing.T) {
	var c Credentials // zero value is usable
	c.AddToken("b", Token{Kind: "K1", Identifier: []byte("id-b")})
	c.AddToken("a", Token{Kind: KindAMRMToken, Identifier: []byte("id-a")})
	c.AddToken("c", Token{Kind: "K1", Identifier: []byte("id-c")})
	c.AddToken("b", Token{Kind: "K1", Identifier: []byte("id-b2")}) // replace in place

	var aliases []string
	for _, e := range c.Tokens() {
		aliases = append(aliases, e.Alias)
	}
	require.Equal(t, []string{"b", "a", "c"}, aliases, "insertion order kept")
	tok, ok := c.Token("b")
	require.True(t, ok)
	require.Equal(t, "id-b2", string(tok.Identifier))

	// Returned tokens are copies.
	tok.Identifier[0] = 'X'
	again, _ := c.Token("b")
	require.Equal(t, "id-b2", string(again.Identifier))

	k1 := c.TokensOfKind("K1")
	require.Len(t, k1, 2)
	require.Equal(t, "b", k1[0].Alias)
	require.Equal(t, "c", k1[1].Alias)

	c.AddSecret("s1", []byte{1})
	c.AddSecret("s2", []byte{2})
	c.AddSecret("s1", []byte{3})
	require.Equal(t, []string{"s1", "s2"}, c.SecretAliases())
	k, ok := c.Secret("s1")
	require.True(t, ok)
	require.Equal(t, []byte{3}, k)

	without := c.Without(KindAMRMToken)
	require.Equal(t, 2, without.NumTokens())
	_, ok = without.Token("a")
	require.False(t, ok)
	require.Equal(t, 2, without.NumSecrets())
	require.Equal(t, 3, c.NumTokens(), "Without does not modify the original")

	require.True(t, c.RemoveToken("a"))
	require.False(t, c.RemoveToken("a"))
	require.True(t, c.RemoveSecret("s2"))
	require.False(t, c.RemoveSecret("s2"))
	_, ok = c.Secret("s2")
	require.False(t, ok)
	require.Equal(t, 2, c.NumTokens())

	other := NewCredentials()
	other.AddToken("c", Token{Kind: "K2"})
	other.AddToken("d", Token{Kind: "K3"})
	c.Merge(other)
	tok, _ = c.Token("c")
	require.Equal(t, "K2", tok.Kind)
	require.Equal(t, 3, c.NumTokens())

	clone := c.Clone()
	clone.RemoveToken("c")
	require.Equal(t, 3, c.NumTokens())
}

func TestNoSecretsInStrings(t *testing.T) {
	id := []byte("IDENTIFIER-SECRET-BYTES")
	pw := []byte("PASSWORD-SECRET-BYTES")
	tok := Token{Identifier: id, Password: pw, Kind: KindHDFSDelegation, Service: "ha-hdfs:ns1"}
	c := NewCredentials()
	c.AddToken("hdfs", tok)
	c.AddSecret("key", []byte("SECRET-KEY-BYTES"))

	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%q", "%d"} {
		outs = append(outs, fmt.Sprintf(verb, tok), fmt.Sprintf(verb, &tok), fmt.Sprintf(verb, c), fmt.Sprintf(verb, *c),
			fmt.Sprintf(verb, c.Tokens()))
	}
	for _, out := range outs {
		for _, secret := range []string{"IDENTIFIER", "PASSWORD", "SECRET-KEY", fmt.Sprintf("%x", id), fmt.Sprintf("%x", pw)} {
			require.NotContains(t, out, secret)
		}
	}
	s := tok.String()
	require.Contains(t, s, KindHDFSDelegation)
	require.Contains(t, s, "ha-hdfs:ns1")
	require.Contains(t, s, tok.Fingerprint())
	require.Len(t, tok.Fingerprint(), 12)
	require.True(t, strings.Contains(c.String(), `secret "key"`))
}
