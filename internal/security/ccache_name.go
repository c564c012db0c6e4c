package security

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// defaultCCacheTemplate is MIT's compiled-in default ticket cache name,
// used when neither KRB5CCNAME nor krb5.conf's default_ccache_name says one.
const defaultCCacheTemplate = "FILE:/tmp/krb5cc_%{uid}"

// Bounds on reading krb5.conf for default_ccache_name: a configuration
// larger or more deeply included than this is not a real one.
const (
	maxKrb5ConfBytes    = 1 << 20
	maxKrb5ConfIncludes = 8
	maxKrb5ConfFiles    = 64
)

// ccacheName is a resolved ticket cache name: Type is FILE, KEYRING, KCM...
// (upper case), Residual what follows the colon, From where the name came
// from, for messages.
type ccacheName struct {
	Type     string
	Residual string
	From     string
}

func (n ccacheName) String() string { return n.Type + ":" + n.Residual }

// resolveCCacheName picks the ticket cache as MIT's libkrb5 does: the
// option, else KRB5CCNAME as it is, else krb5.conf's [libdefaults]
// default_ccache_name with its %{...} tokens expanded, else
// FILE:/tmp/krb5cc_%{uid}. A name without a type is a FILE cache.
func resolveCCacheName(opts KerberosOptions, krb5Conf string) (ccacheName, error) {
	name, from := opts.CCache, "KerberosOptions.CCache"
	if name == "" {
		name, from = opts.Getenv(EnvKrb5CCName), EnvKrb5CCName
	}
	if name == "" {
		configured, err := profileDefaultCCacheName(krb5Conf)
		if err != nil {
			return ccacheName{}, &KerberosError{Op: "reading default_ccache_name from " + krb5Conf, Err: err, Hint: "fix the file or set " + EnvKrb5CCName}
		}
		name, from = configured, "default_ccache_name in "+krb5Conf
		if name == "" {
			name, from = defaultCCacheTemplate, "the default"
		}
		expanded, err := expandCCacheTokens(name, opts.Getenv)
		if err != nil {
			return ccacheName{}, &KerberosError{Op: fmt.Sprintf("the ticket cache name %s (from %s)", name, from), Err: err, Hint: "set " + EnvKrb5CCName + " to the cache kinit writes"}
		}
		name = expanded
	}
	kind, rest, ok := strings.Cut(name, ":")
	if !ok || strings.Contains(kind, "/") {
		// MIT: no type prefix (or a path with a colon later on) is a file.
		return ccacheName{Type: "FILE", Residual: name, From: from}, nil
	}
	return ccacheName{Type: strings.ToUpper(kind), Residual: rest, From: from}, nil
}

// expandCCacheTokens expands the %{...} tokens MIT's libkrb5 knows in a
// cache name from krb5.conf (k5_expand_path_tokens): uid and USERID are the
// real user id, euid the effective one, username the effective user's name,
// TEMP is TMPDIR or /tmp, null nothing. LIBDIR and friends name
// build-time directories of libkrb5 that tfyarn cannot know, so they, like
// any other token, are an error rather than a guess.
func expandCCacheTokens(s string, getenv func(string) string) (string, error) {
	var out strings.Builder
	for {
		i := strings.Index(s, "%{")
		if i < 0 {
			out.WriteString(s)
			return out.String(), nil
		}
		out.WriteString(s[:i])
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", errors.New("a %{ without its }")
		}
		token := s[i+2 : i+j]
		switch token {
		case "uid", "USERID":
			out.WriteString(strconv.Itoa(os.Getuid()))
		case "euid":
			out.WriteString(strconv.Itoa(os.Geteuid()))
		case "username":
			u, err := user.LookupId(strconv.Itoa(os.Geteuid()))
			if err != nil {
				return "", fmt.Errorf("%%{username}: no user name for uid %d", os.Geteuid())
			}
			out.WriteString(u.Username)
		case "TEMP":
			if dir := getenv("TMPDIR"); dir != "" {
				out.WriteString(dir)
			} else {
				out.WriteString("/tmp")
			}
		case "null":
		default:
			return "", fmt.Errorf("tfyarn does not know the token %%{%s}", token)
		}
		s = s[i+j+1:]
	}
}

// profileDefaultCCacheName is [libdefaults] default_ccache_name of the
// krb5.conf at path, following include and includedir directives in place
// as MIT's profile library does; the first value wins. "" when unset.
func profileDefaultCCacheName(path string) (string, error) {
	r := profileReader{}
	v, _, err := r.file(path, 0)
	return v, err
}

type profileReader struct{ files int }

// file reads one configuration file; found says the relation was set.
func (r *profileReader) file(path string, depth int) (value string, found bool, err error) {
	if depth > maxKrb5ConfIncludes {
		return "", false, fmt.Errorf("includes nest deeper than %d at %s", maxKrb5ConfIncludes, path)
	}
	if r.files++; r.files > maxKrb5ConfFiles {
		return "", false, fmt.Errorf("more than %d included files", maxKrb5ConfFiles)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	b, err := readBounded(f, maxKrb5ConfBytes)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", path, err)
	}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxKrb5ConfBytes)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "", line[0] == '#', line[0] == ';':
			continue
		case strings.HasPrefix(line, "include") && len(line) > len("include") && (line[7] == ' ' || line[7] == '\t'):
			if v, ok, err := r.file(strings.TrimSpace(line[7:]), depth+1); err != nil || ok {
				return v, ok, err
			}
		case strings.HasPrefix(line, "includedir") && len(line) > len("includedir") && (line[10] == ' ' || line[10] == '\t'):
			if v, ok, err := r.dir(strings.TrimSpace(line[10:]), depth+1); err != nil || ok {
				return v, ok, err
			}
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return "", false, fmt.Errorf("%s: a section header without ]: %q", path, line)
			}
			section = line[1:end]
		case section == "libdefaults":
			name, value, ok := strings.Cut(line, "=")
			if !ok || strings.TrimSpace(name) != "default_ccache_name" {
				continue
			}
			value = strings.TrimSpace(value)
			// MIT: a value may be quoted, and a trailing * marks it final.
			value = strings.TrimSpace(strings.TrimSuffix(value, "*"))
			if uq, err := strconv.Unquote(value); err == nil && strings.HasPrefix(value, `"`) {
				value = uq
			}
			return value, true, nil
		}
	}
	return "", false, sc.Err()
}

// dir reads the files of an includedir in name order, only those MIT reads:
// names of letters, digits, - and _ alone, or ending in .conf.
func (r *profileReader) dir(path string, depth int) (string, bool, error) {
	entries, err := os.ReadDir(path)
	if err != nil {
		return "", false, err
	}
	for _, e := range entries {
		if e.IsDir() || !profileIncludable(e.Name()) {
			continue
		}
		if v, ok, err := r.file(filepath.Join(path, e.Name()), depth); err != nil || ok {
			return v, ok, err
		}
	}
	return "", false, nil
}

func profileIncludable(name string) bool {
	if strings.HasSuffix(name, ".conf") {
		return true
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return name != ""
}

func readBounded(f *os.File, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}
