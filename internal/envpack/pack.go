package envpack

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Options tune Pack. The zero value is right for most uses.
type Options struct {
	// Level is the gzip level, 1 (fastest) to 9; 0 means DefaultLevel.
	Level int
	// Serial compresses on one core with compress/gzip instead of pgzip's
	// parallel blocks. The archive's bytes differ between the two (both are
	// deterministic); it exists for comparison and for tiny environments.
	Serial bool
}

// ArchiveTime is every entry's mtime: a constant, so the archive depends on
// the environment's content only. Not 0: some tars warn on the epoch.
var ArchiveTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// shebangMax bounds the bin/ files read whole to check their shebang: scripts
// are tiny; anything larger is a binary and streamed.
const shebangMax = 1 << 20

// Pack writes the venv or conda environment in dir to out as a .tar.gz whose
// entries are relative to the environment's root (YARN unpacks an ARCHIVE
// resource into a directory named after its link name) and returns what it
// did. The same input gives the same bytes: entries in lexical order, fixed
// mtimes, owner 0 without names, modes reduced to 0755/0644, no gzip name or
// time, and a fixed compression setting. __pycache__ and *.pyc are left out.
//
// On error, out holds a partial archive the caller should discard.
func Pack(ctx context.Context, dir string, out io.Writer, opts Options) (Manifest, error) {
	info, err := detect(dir)
	if err != nil {
		return Manifest{}, &Error{Op: "pack", Path: dir, Err: err}
	}
	if opts.Level < 0 || opts.Level > 9 {
		return Manifest{}, &Error{Op: "pack", Path: dir, Err: fmt.Errorf("gzip level %d: expected 1 to 9", opts.Level)}
	}
	m := Manifest{
		Kind:          info.kind,
		Prefixes:      info.prefixes,
		PythonVersion: info.version,
		Home:          info.home,
	}
	if info.kind == KindVenv {
		m.BaseInterpreter = baseInterpreter(info.root, info.prefixes, info.exe, info.home)
	}

	hw := &hashWriter{w: out, h: sha256.New()}
	zw, err := newGzip(hw, opts)
	if err != nil {
		return Manifest{}, &Error{Op: "pack", Path: dir, Err: err}
	}
	p := newPacker(ctx, info, zw, &m)
	err = filepath.WalkDir(info.root, p.visit)
	if err == nil {
		err = p.writeManifest()
	}
	if err == nil {
		err = p.tw.Close()
	}
	if cerr := zw.Close(); err == nil {
		err = cerr // pgzip reports write errors here
	}
	if err != nil {
		return Manifest{}, &Error{Op: "pack", Path: dir, Err: err}
	}
	m.ArchiveBytes = hw.n
	m.SHA256 = hex.EncodeToString(hw.h.Sum(nil))
	return m, nil
}

type packer struct {
	ctx  context.Context
	info envInfo
	tw   *tar.Writer
	m    *Manifest
	scan *prefixScanner
	buf  []byte
	// keep, if set, selects what goes into this archive (one layer of
	// PackLayers): for a directory, whether it gets an entry and whether
	// the walk goes into it; for anything else, whether it gets one.
	keep func(rel string, dir bool) (keep, descend bool)
}

func newPacker(ctx context.Context, info envInfo, w io.Writer, m *Manifest) *packer {
	return &packer{ctx: ctx, info: info, tw: tar.NewWriter(w), m: m, scan: newPrefixScanner(info.prefixes)}
}

func (p *packer) visit(full string, d fs.DirEntry, err error) error {
	if err != nil {
		return err // already an *fs.PathError naming the file
	}
	if err := p.ctx.Err(); err != nil {
		return err
	}
	rel, err := filepath.Rel(p.info.root, full)
	if err != nil {
		return err
	}
	if rel == "." {
		return nil // entries are relative to the root; no entry for the root itself
	}
	rel = filepath.ToSlash(rel)
	if p.keep != nil {
		keep, descend := p.keep(rel, d.IsDir())
		if d.IsDir() && !keep {
			return filepath.SkipDir
		}
		if !keep {
			return nil
		}
		if d.IsDir() && !descend {
			return filepath.SkipDir
		}
	}
	switch t := d.Type(); {
	case t.IsDir():
		if d.Name() == "__pycache__" {
			p.m.Skipped.PycacheDirs++
			return filepath.SkipDir
		}
		p.m.Dirs++
		return p.tw.WriteHeader(p.header(rel+"/", tar.TypeDir, 0o755, 0))
	case t&fs.ModeSymlink != 0:
		return p.symlink(full, rel)
	case t.IsRegular():
		if strings.HasSuffix(d.Name(), ".pyc") {
			p.m.Skipped.PycFiles++
			return nil
		}
		if rel == ManifestName {
			return nil // a previous pack's, unpacked here: ours replaces it
		}
		return p.file(full, rel)
	default:
		p.m.Skipped.Special++
		return nil
	}
}

func (p *packer) header(name string, typ byte, mode int64, size int64) *tar.Header {
	return &tar.Header{
		Typeflag: typ,
		Name:     name,
		Mode:     mode,
		Size:     size,
		ModTime:  ArchiveTime,
		// Uid, Gid 0 and no Uname/Gname: the unpacking user owns everything.
	}
}

// symlink keeps links as links. Absolute links into the environment become
// relative (they would point back at the packing machine otherwise); links
// that leave it are kept and listed.
func (p *packer) symlink(full, rel string) error {
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
	if filepath.IsAbs(target) {
		if inEnv, ok := underPrefix(filepath.Clean(target), p.info.prefixes); ok {
			target = relPath(path.Dir(rel), inEnv)
		} else {
			p.m.ExternalSymlinks = append(p.m.ExternalSymlinks, Symlink{Path: rel, Target: target})
		}
	} else if escapes(path.Join(path.Dir(rel), filepath.ToSlash(target))) {
		p.m.ExternalSymlinks = append(p.m.ExternalSymlinks, Symlink{Path: rel, Target: target})
	}
	p.m.Symlinks++
	h := p.header(rel, tar.TypeSymlink, 0o777, 0)
	h.Linkname = target
	return p.tw.WriteHeader(h)
}

func (p *packer) file(full, rel string) error {
	f, err := os.Open(full)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	mode := int64(0o644)
	if st.Mode().Perm()&0o111 != 0 {
		mode = 0o755
	}
	size := st.Size()
	p.scan.reset()
	if path.Dir(rel) == "bin" && size <= shebangMax {
		content, err := io.ReadAll(io.LimitReader(f, shebangMax+1))
		if err != nil {
			return err
		}
		if int64(len(content)) != size {
			return changedError(full)
		}
		if out, ok := rewriteShebang(content, rel, p.info.prefixes); ok {
			content = out
			p.m.ShebangsRewritten = append(p.m.ShebangsRewritten, rel)
		}
		if err := p.tw.WriteHeader(p.header(rel, tar.TypeReg, mode, int64(len(content)))); err != nil {
			return err
		}
		if _, err := p.tw.Write(content); err != nil {
			return err
		}
		p.scan.Write(content)
		p.record(rel, int64(len(content)))
		return nil
	}
	if err := p.tw.WriteHeader(p.header(rel, tar.TypeReg, mode, size)); err != nil {
		return err
	}
	if p.buf == nil {
		p.buf = make([]byte, 1<<20)
	}
	n, err := io.CopyBuffer(io.MultiWriter(p.tw, p.scan), ctxReader{p.ctx, io.LimitReader(f, size)}, p.buf)
	if err != nil {
		return err
	}
	// The header promised size bytes: a file that shrank or grew meanwhile
	// would make a corrupt or silently truncated entry.
	if var1, _ := f.Read(p.buf[:1]); n != size || var1 != 0 {
		return changedError(full)
	}
	p.record(rel, size)
	return nil
}

func (p *packer) record(rel string, size int64) {
	p.m.Files++
	p.m.Bytes += size
	if p.scan.found {
		if p.scan.binary {
			p.m.PrefixBinaryFiles = append(p.m.PrefixBinaryFiles, rel)
		} else {
			p.m.PrefixTextFiles = append(p.m.PrefixTextFiles, rel)
		}
	}
}

func (p *packer) writeManifest() error {
	b, err := json.MarshalIndent(p.m, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := p.tw.WriteHeader(p.header(ManifestName, tar.TypeReg, 0o644, int64(len(b)))); err != nil {
		return err
	}
	_, err = p.tw.Write(b)
	return err
}

func changedError(full string) error {
	return &fs.PathError{Op: "read", Path: full, Err: errors.New("file changed while packing")}
}

// underPrefix returns p relative to the first prefix it is under ("." for a
// prefix itself), slash-separated.
func underPrefix(p string, prefixes []string) (string, bool) {
	for _, pre := range prefixes {
		if p == pre {
			return ".", true
		}
		if strings.HasPrefix(p, pre+"/") {
			return filepath.ToSlash(strings.TrimPrefix(p, pre+"/")), true
		}
	}
	return "", false
}

// escapes reports whether a cleaned env-relative path leaves the environment.
func escapes(rel string) bool {
	rel = path.Clean(rel)
	return rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel)
}

// hashWriter counts and hashes what reaches out: the archive's size and sha256.
type hashWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (w *hashWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	return n, err
}

// ctxReader stops a long copy soon after ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}
