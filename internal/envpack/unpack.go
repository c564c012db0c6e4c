package envpack

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Unpack unpacks a .zip/.jar or .tar/.tar.gz/.tgz archive into dir, as
// YARN's NodeManager does for an ARCHIVE resource (by the lower-cased
// name's suffix). `run --local` lays out --archives with it, and an
// archive may come from someone else, so an entry that would leave dir is
// refused, with an error naming it: an absolute path or one climbing out
// (..), an entry written through a symbolic link (one the archive made or
// one already in dir), a symbolic link whose target is absolute or may
// leave dir, a hard link to a path outside. Writes go through an os.Root
// of dir besides.
func Unpack(ctx context.Context, archive, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	u := unpacker{ctx: ctx, root: root}
	lower := strings.ToLower(archive)
	if strings.HasSuffix(lower, ".zip") || strings.HasSuffix(lower, ".jar") {
		return u.unzip(archive)
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
	return u.untar(tar.NewReader(r))
}

// unpacker writes entries under root.
type unpacker struct {
	ctx  context.Context
	root *os.Root
}

func (u unpacker) unzip(archive string) error {
	zr, err := zip.OpenReader(archive)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		p, err := u.target(f.Name)
		if err != nil {
			return err
		}
		if f.FileInfo().IsDir() {
			if err := u.root.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		// A zip's symbolic link is written as a file holding its
		// target, as before: nothing is followed.
		rc, err := f.Open()
		if err != nil {
			return err
		}
		err = u.write(p, f.Mode().Perm(), rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (u unpacker) untar(tr *tar.Reader) error {
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		p, err := u.target(h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = u.root.MkdirAll(p, 0o755)
		case tar.TypeReg:
			err = u.write(p, os.FileMode(h.Mode).Perm(), tr)
		case tar.TypeSymlink:
			err = u.symlink(h.Name, p, h.Linkname)
		case tar.TypeLink:
			err = u.hardlink(h.Name, p, h.Linkname)
		}
		if err != nil {
			return err
		}
	}
}

// target is the entry name's path under the root, refused when it leaves
// the root or goes through a symbolic link there.
func (u unpacker) target(name string) (string, error) {
	p, err := inside(name)
	if err != nil {
		return "", err
	}
	if err := u.noLinkOn(name, p); err != nil {
		return "", err
	}
	return p, nil
}

// inside cleans an entry's name (slash-separated): refused when empty,
// absolute or leaving the directory.
func inside(name string) (string, error) {
	if name == "" {
		return "", errors.New("an entry without a name; refused")
	}
	if path.IsAbs(name) {
		return "", fmt.Errorf("entry %q: an absolute path leaves the archive's directory; refused", name)
	}
	p := path.Clean(name)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("entry %q leaves the archive's directory; refused", name)
	}
	return p, nil
}

// noLinkOn refuses p (entry name's path) when p or a directory on its way
// is a symbolic link: writing through it could land anywhere.
func (u unpacker) noLinkOn(name, p string) error {
	if p == "." {
		return nil
	}
	parts := strings.Split(p, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		st, err := u.root.Lstat(sub)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("entry %q: %w", name, err)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("entry %q would be written through the symbolic link %q; refused", name, sub)
		}
	}
	return nil
}

func (u unpacker) write(p string, mode os.FileMode, r io.Reader) error {
	if err := u.ctx.Err(); err != nil {
		return err
	}
	if err := u.root.MkdirAll(path.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := u.root.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode|0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// symlink makes p a symbolic link to target, refused when target is
// absolute or may leave the root: a target may climb (..) only at its
// start, and no higher than p's directory's depth. (Past its start, a ..
// after a link the archive makes could climb further than it reads.)
func (u unpacker) symlink(name, p, target string) error {
	if target == "" || path.IsAbs(target) {
		return fmt.Errorf("entry %q: a symbolic link to %q, an absolute path (or none), leaves the archive's directory; refused", name, target)
	}
	depth := strings.Count(path.Dir(p), "/") + 1
	if path.Dir(p) == "." {
		depth = 0
	}
	descended := false
	for _, part := range strings.Split(target, "/") {
		switch {
		case part == "" || part == ".":
		case part == ".." && (descended || depth == 0):
			return fmt.Errorf("entry %q: a symbolic link to %q, which may leave the archive's directory; refused", name, target)
		case part == "..":
			depth--
		default:
			descended = true
		}
	}
	if err := u.root.MkdirAll(path.Dir(p), 0o755); err != nil {
		return err
	}
	return u.root.Symlink(target, p)
}

// hardlink makes p a hard link to the archive's entry target, refused
// when target leaves the root or goes through a symbolic link.
func (u unpacker) hardlink(name, p, target string) error {
	old, err := inside(target)
	if err != nil || old == "." {
		return fmt.Errorf("entry %q: a hard link to %q, outside the archive's directory; refused", name, target)
	}
	if err := u.noLinkOn(name, old); err != nil {
		return err
	}
	if err := u.root.MkdirAll(path.Dir(p), 0o755); err != nil {
		return err
	}
	return u.root.Link(old, p)
}
