package checkpoint

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// upload copies the local directory src into the store's directory dst
// (made first) and returns the bytes and files copied. tfyarn's own files
// at src's top (reservedPrefix) are left out, and so is what is neither a
// directory nor a regular file (links are not followed: a link out of the
// directory would save what the program never wrote).
func upload(ctx context.Context, st Store, src, dst string) (bytes int64, files int, err error) {
	if err := st.MakePrivateDir(ctx, dst); err != nil {
		return 0, 0, err
	}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		if !strings.Contains(rel, string(filepath.Separator)) && strings.HasPrefix(rel, reservedPrefix) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := path.Join(dst, filepath.ToSlash(rel))
		switch {
		case d.IsDir():
			return st.MakePrivateDir(ctx, target)
		case d.Type().IsRegular():
			n, err := uploadFile(ctx, st, p, target)
			bytes += n
			files++
			return err
		}
		return nil
	})
	return bytes, files, err
}

func uploadFile(ctx context.Context, st Store, local, remote string) (int64, error) {
	f, err := os.Open(local)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return st.WritePrivateFile(ctx, remote, f)
}

// download copies the store's directory src into the local directory dst
// (0700 directories, 0600 files), over what is there, and returns the bytes
// and files copied. At the checkpoint's top (top), tfyarn's own files
// (StepFile) stay behind.
func download(ctx context.Context, st Store, src, dst string, top bool) (bytes int64, files int, err error) {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return 0, 0, err
	}
	entries, err := st.ReadDir(ctx, src)
	if err != nil {
		return 0, 0, err
	}
	for _, fi := range entries {
		name := fi.Name()
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\") {
			return bytes, files, fmt.Errorf("%s: a name no file may have: %q", src, name)
		}
		if top && strings.HasPrefix(name, reservedPrefix) {
			continue
		}
		from, to := path.Join(src, name), filepath.Join(dst, name)
		if fi.IsDir() {
			b, f, err := download(ctx, st, from, to, false)
			bytes, files = bytes+b, files+f
			if err != nil {
				return bytes, files, err
			}
			continue
		}
		n, err := downloadFile(ctx, st, from, to)
		bytes, files = bytes+n, files+1
		if err != nil {
			return bytes, files, err
		}
	}
	return bytes, files, nil
}

func downloadFile(ctx context.Context, st Store, remote, local string) (int64, error) {
	if err := os.RemoveAll(local); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(local, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := st.ReadFileTo(ctx, remote, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// copyTree copies the local directory src to dst (which must not exist),
// leaving out what upload leaves out: the snapshot a marked checkpoint is
// saved from, so the program may go on writing while it is uploaded.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if rel != "." && !strings.Contains(rel, string(filepath.Separator)) && strings.HasPrefix(rel, reservedPrefix) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(target, 0o700)
		case d.Type().IsRegular():
			return copyFile(p, target)
		}
		return nil
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
