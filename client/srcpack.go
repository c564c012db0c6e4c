package client

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// srcTime is every entry's mtime in a packed source directory: a constant,
// so the archive (and its cache entry) depends on the content only.
var srcTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// srcSkipDirs are left out of a packed source directory: version control
// metadata and compiled bytecode (which embeds paths and mtimes, and Python
// regenerates).
var srcSkipDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, "__pycache__": true}

// packSrcDir writes dir as a deterministic .tar.gz to out, entries relative
// to dir in lexical order with fixed mtimes, owner 0 without names, modes
// 0755 (anything executable) or 0644, no gzip name or time, and returns the
// archive's hex sha256. Left out: .git, .hg, .svn, __pycache__, *.pyc and
// subdirectories that are Python environments (pyvenv.cfg or conda-meta/:
// they ship with --env, not as sources). Symbolic links stay links.
func packSrcDir(ctx context.Context, dir string, out io.Writer) (digest string, err error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	hw := &digestWriter{w: out, h: sha256.New()}
	zw, err := gzip.NewWriterLevel(hw, gzip.BestSpeed) // zero Header: no name, no mtime
	if err != nil {
		return "", err
	}
	tw := tar.NewWriter(zw)
	buf := make([]byte, 1<<20)
	err = filepath.WalkDir(root, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(root, full)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		hdr := &tar.Header{Name: rel, ModTime: srcTime, Mode: 0o644}
		switch t := d.Type(); {
		case t.IsDir():
			if srcSkipDirs[d.Name()] || isPythonEnv(full) {
				return filepath.SkipDir
			}
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, rel+"/", 0o755
			return tw.WriteHeader(hdr)
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Linkname, hdr.Mode = tar.TypeSymlink, target, 0o777
			return tw.WriteHeader(hdr)
		case t.IsRegular():
			if strings.HasSuffix(d.Name(), ".pyc") {
				return nil
			}
			return addSrcFile(ctx, tw, hdr, full, buf)
		}
		return nil // sockets, FIFOs, devices
	})
	if err == nil {
		err = tw.Close()
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("client: packing the source directory %s: %w", dir, err)
	}
	return hex.EncodeToString(hw.h.Sum(nil)), nil
}

func addSrcFile(ctx context.Context, tw *tar.Writer, hdr *tar.Header, full string, buf []byte) error {
	f, err := os.Open(full)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Mode().Perm()&0o111 != 0 {
		hdr.Mode = 0o755
	}
	hdr.Typeflag, hdr.Size = tar.TypeReg, st.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.CopyBuffer(tw, io.LimitReader(ctxReader{ctx, f}, st.Size()), buf)
	if err == nil && n != st.Size() {
		err = fmt.Errorf("%s changed while packing", full)
	}
	return err
}

// digestWriter hashes what reaches w.
type digestWriter struct {
	w io.Writer
	h hash.Hash
}

func (d *digestWriter) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	d.h.Write(p[:n])
	return n, err
}

// ctxReader stops a long copy soon after ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
