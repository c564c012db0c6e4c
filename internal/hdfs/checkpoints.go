package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	gohdfs "github.com/colinmarc/hdfs/v2"
)

// The calls below are what package checkpoint needs of HDFS (its Store):
// checkpoints are the user's own data, so every directory is 0700 and every
// file 0600, whoever made them before.

// privateDirPerm is a checkpoint directory's mode.
const privateDirPerm = 0o700

// MakePrivateDir makes the directory p and its missing parents (0700) and
// closes p to 0700 when it is wider. It refuses a p another user owns: his
// directory is no place for the user's checkpoints.
func (fs *FS) MakePrivateDir(ctx context.Context, p string) error {
	if !path.IsAbs(p) {
		return pathErr("mkdir", p, errors.New("not an absolute path"))
	}
	if err := fs.mkdirAll(ctx, p, privateDirPerm); err != nil {
		return pathErr("mkdir", p, err)
	}
	fi, err := fs.stat(ctx, p)
	if err != nil {
		return pathErr("stat", p, err)
	}
	if owner := fileOwner(fi); owner != "" && owner != fs.user {
		return fmt.Errorf("%s is owned by %s, not by %s: name a directory of your own", p, owner, fs.user)
	}
	return pathErr("chmod", p, fs.tighten(ctx, p, privateDirPerm, fi))
}

// WritePrivateFile creates p (0600; it must not exist) with r's bytes and
// returns how many it wrote. A failure leaves no file.
func (fs *FS) WritePrivateFile(ctx context.Context, p string, r io.Reader) (int64, error) {
	w, err := fs.writeFile(ctx, p, privateFilePerm, r)
	return w.size, pathErr("write", p, err)
}

// ReadFileTo copies the file p into w and returns how many bytes it copied.
// It reads on, block after block, with a fresh deadline for each read: a
// reader at offsets would open a DataNode connection per call (a
// gigabyte took 16 s so).
func (fs *FS) ReadFileTo(ctx context.Context, p string, w io.Writer) (int64, error) {
	var f *gohdfs.FileReader
	err := fs.do(ctx, func() error {
		var err error
		f, err = fs.client.Open(p)
		return err
	})
	if err != nil {
		return 0, pathErr("open", p, err)
	}
	defer f.Close()
	n, err := io.CopyBuffer(w, ctxReader{ctx, deadlineReader{f, fs.ioTimeout}}, make([]byte, 1<<20))
	return n, pathErr("read", p, err)
}

// RenameNoReplace renames src to dst, failing when dst exists: the one
// step that makes a written checkpoint visible, whole.
func (fs *FS) RenameNoReplace(ctx context.Context, src, dst string) error {
	return pathErr("rename", src, fs.renameNoReplace(ctx, src, dst))
}

// StatPath is the FileInfo of p; a missing p is os.ErrNotExist (wrapped).
func (fs *FS) StatPath(ctx context.Context, p string) (os.FileInfo, error) {
	fi, err := fs.stat(ctx, p)
	return fi, pathErr("stat", p, err)
}
