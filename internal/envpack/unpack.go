package envpack

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Unpack unpacks a .zip/.jar or .tar/.tar.gz/.tgz archive into dir, as
// YARN's NodeManager does for an ARCHIVE resource (by the lower-cased
// name's suffix); entries leaving dir are refused. `run --local` lays out
// --archives with it.
func Unpack(ctx context.Context, archive, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	target := func(name string) (string, error) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if p != dir && !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			return "", fmt.Errorf("entry %q leaves the archive's directory", name)
		}
		return p, nil
	}
	write := func(p string, mode os.FileMode, r io.Reader) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode|0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	lower := strings.ToLower(archive)
	if strings.HasSuffix(lower, ".zip") || strings.HasSuffix(lower, ".jar") {
		zr, err := zip.OpenReader(archive)
		if err != nil {
			return err
		}
		defer zr.Close()
		for _, f := range zr.File {
			p, err := target(f.Name)
			if err != nil {
				return err
			}
			if f.FileInfo().IsDir() {
				if err := os.MkdirAll(p, 0o755); err != nil {
					return err
				}
				continue
			}
			rc, err := f.Open()
			if err != nil {
				return err
			}
			err = write(p, f.Mode().Perm(), rc)
			rc.Close()
			if err != nil {
				return err
			}
		}
		return nil
	}
	fh, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer fh.Close()
	var r io.Reader = fh
	if !strings.HasSuffix(lower, ".tar") {
		zr, err := gzip.NewReader(fh)
		if err != nil {
			return err
		}
		defer zr.Close()
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		p, err := target(h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			err = write(p, os.FileMode(h.Mode).Perm(), tr)
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.Symlink(h.Linkname, p)
			}
		}
		if err != nil {
			return err
		}
	}
}
