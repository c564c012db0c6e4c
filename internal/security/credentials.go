package security

import (
	"fmt"
	"sort"
	"strings"
)

// AliasedToken is a token with the alias it is stored under.
type AliasedToken struct {
	Alias string
	Token Token
}

type secretEntry struct {
	alias string
	key   []byte
}

// Credentials is Hadoop's Credentials: tokens and secret keys, each by
// alias. Unlike Hadoop's HashMaps it keeps insertion order, so what we write
// is deterministic. The zero value is empty and ready to use; it is not safe
// for concurrent mutation.
type Credentials struct {
	tokens  []AliasedToken
	secrets []secretEntry
}

// NewCredentials returns empty credentials.
func NewCredentials() *Credentials { return &Credentials{} }

// AddToken stores t under alias, replacing (in place) any token already
// stored under it, like Hadoop's addToken.
func (c *Credentials) AddToken(alias string, t Token) {
	t = t.Clone()
	for i := range c.tokens {
		if c.tokens[i].Alias == alias {
			c.tokens[i].Token = t
			return
		}
	}
	c.tokens = append(c.tokens, AliasedToken{Alias: alias, Token: t})
}

// Token returns a copy of the token stored under alias.
func (c *Credentials) Token(alias string) (Token, bool) {
	for _, e := range c.tokens {
		if e.Alias == alias {
			return e.Token.Clone(), true
		}
	}
	return Token{}, false
}

// RemoveToken deletes the token under alias and reports whether it existed.
func (c *Credentials) RemoveToken(alias string) bool {
	for i, e := range c.tokens {
		if e.Alias == alias {
			c.tokens = append(c.tokens[:i:i], c.tokens[i+1:]...)
			return true
		}
	}
	return false
}

// Tokens returns copies of all tokens in insertion order.
func (c *Credentials) Tokens() []AliasedToken {
	out := make([]AliasedToken, len(c.tokens))
	for i, e := range c.tokens {
		out[i] = AliasedToken{Alias: e.Alias, Token: e.Token.Clone()}
	}
	return out
}

// TokensOfKind returns copies of the tokens of one kind, in insertion order.
func (c *Credentials) TokensOfKind(kind string) []AliasedToken {
	var out []AliasedToken
	for _, e := range c.tokens {
		if e.Token.Kind == kind {
			out = append(out, AliasedToken{Alias: e.Alias, Token: e.Token.Clone()})
		}
	}
	return out
}

// Without returns a copy without the tokens of the given kinds. The AM uses
// it to drop its AMRMToken before handing its credentials to containers:
// a task holding it could impersonate the AM towards the RM.
func (c *Credentials) Without(kinds ...string) *Credentials {
	out := &Credentials{}
	for _, e := range c.tokens {
		if !contains(kinds, e.Token.Kind) {
			out.AddToken(e.Alias, e.Token)
		}
	}
	for _, s := range c.secrets {
		out.AddSecret(s.alias, s.key)
	}
	return out
}

// Clone returns a deep copy.
func (c *Credentials) Clone() *Credentials { return c.Without() }

// Merge adds every token and secret of other, overwriting same aliases
// (Hadoop's addAll).
func (c *Credentials) Merge(other *Credentials) {
	for _, e := range other.tokens {
		c.AddToken(e.Alias, e.Token)
	}
	for _, s := range other.secrets {
		c.AddSecret(s.alias, s.key)
	}
}

// AddSecret stores a secret key under alias, replacing any existing one.
func (c *Credentials) AddSecret(alias string, key []byte) {
	key = append([]byte(nil), key...)
	for i := range c.secrets {
		if c.secrets[i].alias == alias {
			c.secrets[i].key = key
			return
		}
	}
	c.secrets = append(c.secrets, secretEntry{alias: alias, key: key})
}

// Secret returns a copy of the secret key stored under alias.
func (c *Credentials) Secret(alias string) ([]byte, bool) {
	for _, s := range c.secrets {
		if s.alias == alias {
			return append([]byte(nil), s.key...), true
		}
	}
	return nil, false
}

// RemoveSecret deletes the secret under alias and reports whether it existed.
func (c *Credentials) RemoveSecret(alias string) bool {
	for i, s := range c.secrets {
		if s.alias == alias {
			c.secrets = append(c.secrets[:i:i], c.secrets[i+1:]...)
			return true
		}
	}
	return false
}

// SecretAliases returns the secret aliases in insertion order.
func (c *Credentials) SecretAliases() []string {
	out := make([]string, len(c.secrets))
	for i, s := range c.secrets {
		out[i] = s.alias
	}
	return out
}

// NumTokens and NumSecrets count the entries.
func (c *Credentials) NumTokens() int  { return len(c.tokens) }
func (c *Credentials) NumSecrets() int { return len(c.secrets) }

// String lists token kinds/services and secret aliases, never secret bytes.
// A value receiver, so printing a dereferenced Credentials is safe too.
func (c Credentials) String() string {
	parts := make([]string, 0, len(c.tokens)+len(c.secrets))
	for _, e := range c.tokens {
		parts = append(parts, fmt.Sprintf("%q: %s", e.Alias, e.Token))
	}
	secrets := c.SecretAliases()
	sort.Strings(secrets)
	for _, a := range secrets {
		parts = append(parts, fmt.Sprintf("secret %q", a))
	}
	return "Credentials{" + strings.Join(parts, ", ") + "}"
}

// GoString keeps %#v from dumping secrets.
func (c Credentials) GoString() string { return c.String() }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
