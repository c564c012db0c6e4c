package security

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// Version 1 is a varint-delimited CredentialsProto (Security.proto,
// package hadoop.common). Decoded by hand with protowire so this package
// doesn't depend on generated code:
//
//	CredentialsProto   { repeated CredentialsKVProto tokens = 1; secrets = 2; }
//	CredentialsKVProto { required string alias = 1; optional TokenProto token = 2; optional bytes secret = 3; }
//	TokenProto         { required bytes identifier = 1; password = 2; required string kind = 3; service = 4; }
const (
	fieldCredTokens  protowire.Number = 1
	fieldCredSecrets protowire.Number = 2

	fieldKVAlias  protowire.Number = 1
	fieldKVToken  protowire.Number = 2
	fieldKVSecret protowire.Number = 3

	fieldTokenIdentifier protowire.Number = 1
	fieldTokenPassword   protowire.Number = 2
	fieldTokenKind       protowire.Number = 3
	fieldTokenService    protowire.Number = 4
)

// pfield is one decoded field of a message: its number and, for
// length-delimited fields, its bytes.
type pfield struct {
	num   protowire.Number
	typ   protowire.Type
	bytes []byte
}

// fields splits msg into fields, rejecting malformed encodings. Unknown
// fields are returned too; callers skip what they don't know.
func fields(ctx string, msg []byte) ([]pfield, error) {
	var out []pfield
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, formatErr(ctx, "bad protobuf tag: %v", protowire.ParseError(n))
		}
		msg = msg[n:]
		f := pfield{num: num, typ: typ}
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(msg)
			if m < 0 {
				return nil, formatErr(ctx, "field %d: %v", num, protowire.ParseError(m))
			}
			f.bytes, n = v, m
		} else {
			n = protowire.ConsumeFieldValue(num, typ, msg)
			if n < 0 {
				return nil, formatErr(ctx, "field %d: %v", num, protowire.ParseError(n))
			}
		}
		msg = msg[n:]
		out = append(out, f)
	}
	return out, nil
}

func parseProto(body []byte) (*Credentials, error) {
	size, n := protowire.ConsumeVarint(body)
	if n < 0 {
		return nil, formatErr("", "message length: %v", protowire.ParseError(n))
	}
	body = body[n:]
	if size > uint64(len(body)) {
		return nil, formatErr("", "message length %d exceeds the %d bytes left", size, len(body))
	}
	fs, err := fields("message", body[:size])
	if err != nil {
		return nil, err
	}
	c := &Credentials{}
	var nTokens, nSecrets int
	for _, f := range fs {
		switch f.num {
		case fieldCredTokens:
			nTokens++
			if err := c.parseKV(fmt.Sprintf("token #%d", nTokens), f, true); err != nil {
				return nil, err
			}
		case fieldCredSecrets:
			nSecrets++
			if err := c.parseKV(fmt.Sprintf("secret #%d", nSecrets), f, false); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

func (c *Credentials) parseKV(ctx string, f pfield, isToken bool) error {
	if f.typ != protowire.BytesType {
		return formatErr(ctx, "wrong wire type %d", f.typ)
	}
	fs, err := fields(ctx, f.bytes)
	if err != nil {
		return err
	}
	var alias []byte
	var haveAlias, haveToken bool
	var tokenMsg [][]byte
	var secret []byte
	for _, kv := range fs {
		switch kv.num {
		case fieldKVAlias:
			if alias, err = bytesField(ctx, "alias", kv); err != nil {
				return err
			}
			haveAlias = true
		case fieldKVToken:
			if kv.typ != protowire.BytesType {
				return formatErr(ctx, "token: wrong wire type %d", kv.typ)
			}
			// A repeated occurrence of a message field merges into it.
			tokenMsg = append(tokenMsg, kv.bytes)
			haveToken = true
		case fieldKVSecret:
			if secret, err = bytesField(ctx, "secret", kv); err != nil {
				return err
			}
		}
	}
	if !haveAlias {
		return formatErr(ctx, "missing required alias")
	}
	if !isToken {
		c.AddSecret(string(alias), secret)
		return nil
	}
	// Like Java, an entry without a token yields an empty token; but a
	// token that is present must carry all of TokenProto's required fields.
	var t Token
	if haveToken {
		if t, err = parseTokenProto(aliasContext("token", string(alias)), tokenMsg); err != nil {
			return err
		}
	}
	c.AddToken(string(alias), t)
	return nil
}

func parseTokenProto(ctx string, msgs [][]byte) (Token, error) {
	var t Token
	var seen [5]bool
	for _, msg := range msgs {
		fs, err := fields(ctx, msg)
		if err != nil {
			return t, err
		}
		for _, f := range fs {
			var name string
			var dst *[]byte
			var b []byte
			switch f.num {
			case fieldTokenIdentifier:
				name, dst = "identifier", &t.Identifier
			case fieldTokenPassword:
				name, dst = "password", &t.Password
			case fieldTokenKind:
				name = "kind"
			case fieldTokenService:
				name = "service"
			default:
				continue
			}
			if b, err = bytesField(ctx, name, f); err != nil {
				return t, err
			}
			seen[f.num] = true
			switch {
			case dst != nil:
				*dst = b
			case f.num == fieldTokenKind:
				t.Kind = string(b)
			default:
				t.Service = string(b)
			}
		}
	}
	for i, name := range []string{"identifier", "password", "kind", "service"} {
		if !seen[i+1] {
			return t, formatErr(ctx, "missing required %s", name)
		}
	}
	return t, nil
}

func bytesField(ctx, name string, f pfield) ([]byte, error) {
	if f.typ != protowire.BytesType {
		return nil, formatErr(ctx, "%s: wrong wire type %d", name, f.typ)
	}
	if len(f.bytes) > maxFieldLen {
		return nil, formatErr(ctx, "%s length %d exceeds limit", name, len(f.bytes))
	}
	return append([]byte{}, f.bytes...), nil
}

// AppendProto appends t as a TokenProto message body. Every field is
// written, even when empty, because proto2 required fields must be present.
func (t Token) AppendProto(b []byte) []byte {
	b = protowire.AppendTag(b, fieldTokenIdentifier, protowire.BytesType)
	b = protowire.AppendBytes(b, t.Identifier)
	b = protowire.AppendTag(b, fieldTokenPassword, protowire.BytesType)
	b = protowire.AppendBytes(b, t.Password)
	b = protowire.AppendTag(b, fieldTokenKind, protowire.BytesType)
	b = protowire.AppendString(b, t.Kind)
	b = protowire.AppendTag(b, fieldTokenService, protowire.BytesType)
	return protowire.AppendString(b, t.Service)
}

func (c *Credentials) appendProto(b []byte) []byte {
	var msg []byte
	for _, e := range c.tokens {
		kv := protowire.AppendTag(nil, fieldKVAlias, protowire.BytesType)
		kv = protowire.AppendString(kv, e.Alias)
		kv = protowire.AppendTag(kv, fieldKVToken, protowire.BytesType)
		kv = protowire.AppendBytes(kv, e.Token.AppendProto(nil))
		msg = protowire.AppendTag(msg, fieldCredTokens, protowire.BytesType)
		msg = protowire.AppendBytes(msg, kv)
	}
	for _, s := range c.secrets {
		kv := protowire.AppendTag(nil, fieldKVAlias, protowire.BytesType)
		kv = protowire.AppendString(kv, s.alias)
		kv = protowire.AppendTag(kv, fieldKVSecret, protowire.BytesType)
		kv = protowire.AppendBytes(kv, s.key)
		msg = protowire.AppendTag(msg, fieldCredSecrets, protowire.BytesType)
		msg = protowire.AppendBytes(msg, kv)
	}
	b = protowire.AppendVarint(b, uint64(len(msg)))
	return append(b, msg...)
}
