package envpack

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// IsEnv reports whether dir is a Python environment Pack understands: a venv
// (pyvenv.cfg) or a conda env (conda-meta/).
func IsEnv(dir string) bool {
	return isFile(filepath.Join(dir, "pyvenv.cfg")) || isDir(filepath.Join(dir, "conda-meta"))
}

// IsVenv reports whether dir is a venv (PackLayers packs those).
func IsVenv(dir string) bool { return isFile(filepath.Join(dir, "pyvenv.cfg")) }

// dirSkipDirs are left out of a packed source directory: version control
// metadata and compiled bytecode (which embeds paths and mtimes, and Python
// regenerates).
var dirSkipDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, "__pycache__": true}

// PackDir writes dir as a deterministic .tar.gz to out, entries relative
// to dir in lexical order with fixed mtimes, owner 0 without names, modes
// 0755 (anything executable) or 0644, no gzip name or time, and returns the
// archive's hex sha256. Left out: .git, .hg, .svn, __pycache__, *.pyc and
// subdirectories that are Python environments (pyvenv.cfg or conda-meta/:
// they ship with --env, not as sources). Symbolic links stay links.
func PackDir(ctx context.Context, dir string, out io.Writer) (digest string, err error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	hw := &hashWriter{w: out, h: sha256.New()}
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
		hdr := &tar.Header{Name: rel, ModTime: ArchiveTime, Mode: 0o644}
		switch t := d.Type(); {
		case t.IsDir():
			if dirSkipDirs[d.Name()] || IsEnv(full) {
				return filepath.SkipDir
			}
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, rel+"/", 0o755
			return tw.WriteHeader(hdr)
		case t&fs.ModeSymlink != 0:
			if loop, err := linkLoop(full, rel); loop != nil || err != nil {
				if loop != nil {
					return loop
				}
				return err
			}
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
			return addDirFile(ctx, tw, hdr, full, buf)
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
		return "", &Error{Op: "pack", Path: dir, Err: err}
	}
	return hex.EncodeToString(hw.h.Sum(nil)), nil
}

func addDirFile(ctx context.Context, tw *tar.Writer, hdr *tar.Header, full string, buf []byte) error {
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
