package ipc

import (
	"fmt"
	"strings"
)

// directives are the key=value pairs of a DIGEST-MD5 challenge or response
// (RFC 2831 §7.1), keys lower-cased. Only realm may repeat.
type directives map[string][]string

func (d directives) get(key string) (string, bool) {
	v, ok := d[key]
	if !ok {
		return "", false
	}
	return v[0], true
}

func (d directives) one(key string) string {
	v, _ := d.get(key)
	return v
}

// parseDirectives follows Java's DigestMD5Base.parseDirectives: values may
// be quoted (with backslash escapes) or bare tokens, pairs are separated by
// commas and linear white space, empty elements are skipped.
func parseDirectives(buf []byte) (directives, error) {
	out := directives{}
	i := skipLWS(buf, 0)
	for i < len(buf) {
		if buf[i] == ',' {
			i = skipLWS(buf, i+1)
			continue
		}
		start := i
		for i < len(buf) && buf[i] != '=' && buf[i] != ',' && !isLWS(buf[i]) {
			i++
		}
		key := strings.ToLower(string(buf[start:i]))
		i = skipLWS(buf, i)
		if key == "" || i >= len(buf) || buf[i] != '=' {
			return nil, fmt.Errorf("%w: malformed directive near %q", errDigest, clip(buf[start:]))
		}
		i = skipLWS(buf, i+1)
		var val []byte
		if i < len(buf) && buf[i] == '"' {
			i++
			closed := false
			for i < len(buf) {
				c := buf[i]
				if c == '\\' && i+1 < len(buf) {
					val = append(val, buf[i+1])
					i += 2
					continue
				}
				i++
				if c == '"' {
					closed = true
					break
				}
				val = append(val, c)
			}
			if !closed {
				return nil, fmt.Errorf("%w: unterminated quoted value for %s", errDigest, key)
			}
			i = skipLWS(buf, i)
			if i < len(buf) && buf[i] != ',' {
				return nil, fmt.Errorf("%w: expected ',' after the value of %s", errDigest, key)
			}
		} else {
			start := i
			for i < len(buf) && buf[i] != ',' && !isLWS(buf[i]) {
				i++
			}
			val = buf[start:i]
			i = skipLWS(buf, i)
			if i < len(buf) && buf[i] != ',' {
				return nil, fmt.Errorf("%w: expected ',' after the value of %s", errDigest, key)
			}
		}
		if _, dup := out[key]; dup && key != "realm" {
			return nil, fmt.Errorf("%w: directive %s sent twice", errDigest, key)
		}
		out[key] = append(out[key], string(val))
	}
	return out, nil
}

func isLWS(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

func skipLWS(buf []byte, i int) int {
	for i < len(buf) && isLWS(buf[i]) {
		i++
	}
	return i
}

// clip keeps error messages short; challenges carry no secrets.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}
