// Package atomicfile replaces small local files whole: a reader sees the old
// content or the new, never a part.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write puts data at path through a temporary file beside it (same
// directory, so the rename stays on one filesystem), given perm before any
// byte is written, synced, then renamed into place; the directory is synced
// too, best effort, so that the rename survives a crash. On failure the
// temporary file is removed and path is untouched.
func Write(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
