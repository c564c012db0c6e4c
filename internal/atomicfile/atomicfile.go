// Package atomicfile replaces small local files whole: a reader sees the old
// content or the new, never a part.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write puts data at path through a temporary file beside it (same
// directory, so the rename stays on one filesystem) renamed into place.
// On failure the temporary file is removed and path is untouched.
func Write(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
