package security

import "fmt"

// Version 0 layout (Credentials.write / readFields):
//
//	vint numTokens, then per token: Text alias, Token
//	vint numSecrets, then per secret: Text alias, vint len, bytes
//
// where Text is vint length + bytes and Token.write is
// vint len + identifier, vint len + password, Text kind, Text service.

// Smallest encodings of one entry, used to bound entry counts by the bytes
// actually present instead of trusting the count.
const (
	minTokenLen  = 5 // five zero-length fields
	minSecretLen = 2
)

type wreader struct {
	b   []byte
	off int
}

func (r *wreader) remaining() int { return len(r.b) - r.off }

func (r *wreader) vlong(ctx, field string) (int64, error) {
	v, n, err := readVLong(r.b[r.off:])
	if err != nil {
		return 0, formatErr(ctx, "%s: %v", field, err)
	}
	r.off += n
	return v, nil
}

// length reads a vint length and checks it against limit and the bytes left.
func (r *wreader) length(ctx, field string, limit int) (int, error) {
	v, err := r.vlong(ctx, field+" length")
	if err != nil {
		return 0, err
	}
	switch {
	case v < 0:
		return 0, formatErr(ctx, "%s length %d is negative", field, v)
	case v > int64(limit):
		return 0, formatErr(ctx, "%s length %d exceeds limit", field, v)
	case v > int64(r.remaining()):
		return 0, formatErr(ctx, "%s length %d exceeds the %d bytes left", field, v, r.remaining())
	}
	return int(v), nil
}

func (r *wreader) bytes(ctx, field string) ([]byte, error) {
	n, err := r.length(ctx, field, maxFieldLen)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), r.b[r.off:r.off+n]...)
	r.off += n
	return out, nil
}

func (r *wreader) text(ctx, field string) (string, error) {
	b, err := r.bytes(ctx, field)
	return string(b), err
}

func parseWritable(body []byte) (*Credentials, error) {
	r := &wreader{b: body}
	c := &Credentials{}
	n, err := r.length("", "token count", r.remaining()/minTokenLen)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		alias, err := r.text(fmt.Sprintf("token #%d", i+1), "alias")
		if err != nil {
			return nil, err
		}
		t, err := r.token(aliasContext("token", alias))
		if err != nil {
			return nil, err
		}
		c.AddToken(alias, t)
	}
	n, err = r.length("", "secret count", r.remaining()/minSecretLen)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		alias, err := r.text(fmt.Sprintf("secret #%d", i+1), "alias")
		if err != nil {
			return nil, err
		}
		key, err := r.bytes(aliasContext("secret", alias), "key")
		if err != nil {
			return nil, err
		}
		c.AddSecret(alias, key)
	}
	// Hadoop ignores anything after the secrets; so do we.
	return c, nil
}

func (r *wreader) token(ctx string) (Token, error) {
	var t Token
	var err error
	if t.Identifier, err = r.bytes(ctx, "identifier"); err != nil {
		return t, err
	}
	if t.Password, err = r.bytes(ctx, "password"); err != nil {
		return t, err
	}
	if t.Kind, err = r.text(ctx, "kind"); err != nil {
		return t, err
	}
	if t.Service, err = r.text(ctx, "service"); err != nil {
		return t, err
	}
	return t, nil
}

func appendWritableBytes(b, v []byte) []byte {
	b = appendVLong(b, int64(len(v)))
	return append(b, v...)
}

func appendWritableText(b []byte, s string) []byte {
	b = appendVLong(b, int64(len(s)))
	return append(b, s...)
}

// AppendWritable appends t as Token.write does (no alias).
func (t Token) AppendWritable(b []byte) []byte {
	b = appendWritableBytes(b, t.Identifier)
	b = appendWritableBytes(b, t.Password)
	b = appendWritableText(b, t.Kind)
	return appendWritableText(b, t.Service)
}

func (c *Credentials) appendWritable(b []byte) []byte {
	b = appendVLong(b, int64(len(c.tokens)))
	for _, e := range c.tokens {
		b = appendWritableText(b, e.Alias)
		b = e.Token.AppendWritable(b)
	}
	b = appendVLong(b, int64(len(c.secrets)))
	for _, s := range c.secrets {
		b = appendWritableText(b, s.alias)
		b = appendWritableBytes(b, s.key)
	}
	return b
}
