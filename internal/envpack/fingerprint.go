package envpack

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// fingerprintVersion is part of every fingerprint. Bump it whenever Pack or
// PackDir would write different bytes for the same directory (layout,
// skipping rules, compression), so archives remembered by an older build
// are not taken for what this build would write.
const fingerprintVersion = "tfyarn-envpack-fingerprint/1"

// Target says which packer a fingerprint stands for: their skipping rules
// differ, and so do their archives.
type Target int

const (
	TargetEnv  Target = iota // Pack: a venv or conda env
	TargetDir                // PackDir: a source directory
	TargetFile               // FilePrint: one file, uploaded as is
	// TargetEnvLayers: PackLayers. Fingerprinted like TargetEnv (the same
	// entries), remembered apart in the pack cache, with the layers.
	TargetEnvLayers
)

// Print is the state of a directory as far as packing it is concerned,
// learnt from metadata alone.
type Print struct {
	// Sum is the hex sha256 over the packer and its options, the
	// directory's absolute and resolved paths, and for every entry Pack (or
	// PackDir) would visit: its relative path, type, mode, size, mtime,
	// ctime, inode and symlink target.
	Sum string
	// Entries is how many entries were looked at.
	Entries int
	// Newest is the latest mtime or ctime seen. A change within the
	// filesystem's timestamp granularity of it could go unnoticed (git's
	// "racily clean" problem), so callers remember a print only when Newest
	// is safely in the past (Settled).
	Newest time.Time
}

// settleTime is how long ago the newest change must be for a print to be
// trusted: above the coarsest timestamp granularity of filesystems that
// keep a ctime (1 s: ext3; ext4, xfs and tmpfs use the kernel's coarse
// clock, a few ms).
const settleTime = 1500 * time.Millisecond

// Settled reports whether p may be remembered at time now: nothing in the
// directory changed within settleTime before it was taken.
func (p Print) Settled(takenAt time.Time) bool {
	return p.Newest.Before(takenAt.Add(-settleTime))
}

// metaFS is all Fingerprint may do: list directories and read metadata.
// It has no way to open a file, so a fingerprint never reads file content.
type metaFS interface {
	ReadDir(name string) ([]fs.DirEntry, error)
	Lstat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
}

type osMeta struct{}

func (osMeta) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }
func (osMeta) Lstat(name string) (fs.FileInfo, error)     { return os.Lstat(name) }
func (osMeta) Readlink(name string) (string, error)       { return os.Readlink(name) }

// Fingerprint identifies what Pack (TargetEnv, with opts) or PackDir
// (TargetDir) would archive from dir, without reading any file's content:
// the same print means the same archive bytes from this build of tfyarn.
// Any change to an entry changes its ctime (which users cannot set), so even
// an edit that keeps the size and puts the mtime back gives a new print;
// so does moving or copying the directory (new paths and inodes).
//
// It skips what the packer skips (__pycache__, *.pyc; for TargetDir also
// version control directories and nested environments), so running Python
// in the environment, which writes bytecode, does not change the print.
func Fingerprint(ctx context.Context, dir string, t Target, opts Options) (Print, error) {
	return fingerprint(ctx, osMeta{}, dir, t, opts)
}

func fingerprint(ctx context.Context, fsys metaFS, dir string, t Target, opts Options) (Print, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return Print{}, &Error{Op: "fingerprint", Path: dir, Err: err}
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return Print{}, &Error{Op: "fingerprint", Path: dir, Err: err}
	}
	h := sha256.New()
	var head []byte
	head = appendStr(head, fingerprintVersion)
	head = appendNum(head, int64(t))
	head = appendNum(head, int64(opts.Level))
	serial := int64(0)
	if opts.Serial {
		serial = 1
	}
	head = appendNum(head, serial)
	head = appendStr(head, root)
	head = appendStr(head, real)
	h.Write(head)
	w := &walker{ctx: ctx, fsys: fsys, t: t, sem: make(chan struct{}, walkers)}
	top := w.spawn(root, "")
	var p Print
	if err := top.feed(h, &p); err != nil {
		return Print{}, &Error{Op: "fingerprint", Path: dir, Err: err}
	}
	p.Sum = hex.EncodeToString(h.Sum(nil))
	return p, nil
}

// walkers is how many directories are listed at once: lstat is a system
// call that waits on the filesystem, not on the CPU, so several in flight
// finish a big environment's ~17,000 entries sooner even on 2 cores.
const walkers = 8

type walker struct {
	ctx  context.Context
	fsys metaFS
	t    Target
	sem  chan struct{}
}

// dirPrint is one directory's share of a print: the records of its entries
// with its subdirectories' shares in between, in the lexical depth-first
// order the packers' filepath.WalkDir visits them.
type dirPrint struct {
	segs   []any // []byte records, *dirPrint subdirectories
	n      int
	newest time.Time
	err    error
	done   chan struct{} // closed when filled by a goroutine; nil if filled inline
}

// spawn fills a directory's print on a goroutine when one is free, else
// inline (so the walk never waits on a full pool while holding a slot).
func (w *walker) spawn(full, rel string) *dirPrint {
	select {
	case w.sem <- struct{}{}:
		d := &dirPrint{done: make(chan struct{})}
		go func() {
			defer func() { <-w.sem }()
			defer close(d.done)
			d.err = w.fill(d, full, rel)
		}()
		return d
	default:
		d := &dirPrint{}
		d.err = w.fill(d, full, rel)
		return d
	}
}

func (w *walker) fill(d *dirPrint, full, rel string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	ents, err := w.fsys.ReadDir(full) // sorted by name
	if err != nil {
		return err
	}
	var rec []byte
	for _, e := range ents {
		name := e.Name()
		childFull, childRel := filepath.Join(full, name), path.Join(rel, name)
		if w.skip(e, childFull) {
			continue
		}
		fi, err := w.fsys.Lstat(childFull)
		if err != nil {
			return err
		}
		d.n++
		if rec, err = appendEntry(rec, w.fsys, childFull, childRel, fi, &d.newest); err != nil {
			return err
		}
		if fi.IsDir() {
			d.segs = append(d.segs, rec, w.spawn(childFull, childRel))
			rec = nil
		}
	}
	if len(rec) > 0 {
		d.segs = append(d.segs, rec)
	}
	return nil
}

// feed writes d's share into h in order and adds up p's counts.
func (d *dirPrint) feed(h hash.Hash, p *Print) error {
	if d.done != nil {
		<-d.done
	}
	if d.err != nil {
		return d.err
	}
	p.Entries += d.n
	if d.newest.After(p.Newest) {
		p.Newest = d.newest
	}
	for _, s := range d.segs {
		switch s := s.(type) {
		case []byte:
			h.Write(s)
		case *dirPrint:
			if err := s.feed(h, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// skip mirrors Pack's and PackDir's rules.
func (w *walker) skip(e fs.DirEntry, full string) bool {
	name := e.Name()
	switch {
	case e.IsDir() && name == "__pycache__":
		return true
	case e.Type().IsRegular() && strings.HasSuffix(name, ".pyc"):
		return true
	case w.t == TargetDir && e.IsDir() && (dirSkipDirs[name] || w.isEnv(full)):
		return true
	}
	return false
}

func (w *walker) isEnv(full string) bool {
	if fi, err := w.fsys.Lstat(filepath.Join(full, "pyvenv.cfg")); err == nil && fi.Mode().IsRegular() {
		return true
	}
	fi, err := w.fsys.Lstat(filepath.Join(full, "conda-meta"))
	return err == nil && fi.IsDir()
}

func appendStr(b []byte, s string) []byte {
	return append(appendNum(b, int64(len(s))), s...)
}

func appendNum(b []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

// appendEntry appends one entry's record and raises *newest.
func appendEntry(b []byte, fsys metaFS, full, rel string, fi fs.FileInfo, newest *time.Time) ([]byte, error) {
	b = appendStr(b, rel)
	b = appendNum(b, int64(fi.Mode()))
	if fi.IsDir() {
		// A directory's times move when Python adds __pycache__ to it, and
		// what it holds is in the entries that follow: its name is enough
		// (the packers give every directory 0755).
		return b, nil
	}
	b = appendNum(b, fi.Size())
	mtime := fi.ModTime()
	b = appendNum(b, mtime.UnixNano())
	if mtime.After(*newest) {
		*newest = mtime
	}
	if ctime, ino, ok := changeTime(fi); ok {
		b = appendNum(b, ctime.UnixNano())
		b = appendNum(b, int64(ino))
		if ctime.After(*newest) {
			*newest = ctime
		}
	} else {
		// Without ctime a same-size edit that restores the mtime would go
		// unseen: make such a print unique, so it is never matched.
		b = appendStr(b, strconv.FormatInt(time.Now().UnixNano(), 10))
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := fsys.Readlink(full)
		if err != nil {
			return nil, err
		}
		b = appendStr(b, target)
	}
	return b, nil
}

// FilePrint is Fingerprint for one file (Pack and PackDir are not
// involved): the file's path, its own metadata and, if it is a symlink,
// the metadata of what it points to. Same print, same content.
func FilePrint(p string) (Print, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return Print{}, &Error{Op: "fingerprint", Path: p, Err: err}
	}
	b := appendStr(nil, fingerprintVersion)
	b = appendNum(b, int64(TargetFile))
	b = appendStr(b, abs)
	var pr Print
	for i, stat := range []func(string) (fs.FileInfo, error){os.Lstat, os.Stat} {
		fi, err := stat(abs)
		if err == nil {
			b, err = appendEntry(b, osMeta{}, abs, strconv.Itoa(i), fi, &pr.Newest)
		}
		if err != nil {
			return Print{}, &Error{Op: "fingerprint", Path: p, Err: err}
		}
		pr.Entries++
	}
	sum := sha256.Sum256(b)
	pr.Sum = hex.EncodeToString(sum[:])
	return pr, nil
}
