package envpack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Relocate rewrites, in an unpacked environment, the text files Pack found
// still naming the old prefix (Manifest.PrefixTextFiles) so they name
// envDir's real path instead, as conda-pack's conda-unpack does. It returns
// how many files it changed. Files already rewritten are left alone, so a
// second call (another container on the same node sharing the localized
// copy) changes nothing; each file is replaced by rename, so concurrent
// callers never expose a half-written file.
//
// YARN localizes files read-only in writable directories, which is what the
// write-aside-and-rename needs. Binary files are not rewritten.
func Relocate(ctx context.Context, envDir string) (int, error) {
	root, err := filepath.Abs(envDir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return 0, &Error{Op: "relocate", Path: envDir, Err: err}
	}
	b, err := os.ReadFile(filepath.Join(root, ManifestName))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil // not packed by envpack: nothing recorded to fix
	}
	if err != nil {
		return 0, &Error{Op: "relocate", Path: envDir, Err: err}
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return 0, &Error{Op: "relocate", Path: filepath.Join(root, ManifestName), Err: err}
	}
	var pairs []string
	for _, p := range uniqueLongestFirst(m.Prefixes) {
		if p != root {
			pairs = append(pairs, p, root)
		}
	}
	if len(pairs) == 0 {
		return 0, nil
	}
	// One pass, leftmost-longest: a new prefix that contains an old one is
	// never rewritten again.
	r := strings.NewReplacer(pairs...)
	changed := 0
	for _, rel := range m.PrefixTextFiles {
		if err := ctx.Err(); err != nil {
			return changed, err
		}
		full := filepath.Join(root, filepath.FromSlash(rel))
		if !strings.HasPrefix(full, root+string(filepath.Separator)) {
			continue // a manifest naming ../x is not ours to follow
		}
		ok, err := rewriteFile(full, r)
		if err != nil {
			return changed, &Error{Op: "relocate", Path: full, Err: err}
		}
		if ok {
			changed++
		}
	}
	return changed, nil
}

func rewriteFile(full string, r *strings.Replacer) (bool, error) {
	st, err := os.Lstat(full)
	if err != nil || !st.Mode().IsRegular() {
		return false, err
	}
	b, err := os.ReadFile(full)
	if err != nil {
		return false, err
	}
	s := r.Replace(string(b))
	if s == string(b) {
		return false, nil
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return false, err
	}
	tmp := filepath.Join(filepath.Dir(full), "."+filepath.Base(full)+".envpack-"+hex.EncodeToString(rnd[:]))
	if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
		return false, err
	}
	err = os.Chmod(tmp, st.Mode().Perm())
	if err == nil {
		err = os.Rename(tmp, full)
	}
	if err != nil {
		os.Remove(tmp)
		return false, err
	}
	return true, nil
}
