package envpack

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// layerSizes are the layer sizes, in uncompressed bytes of file content. A
// distribution (or a group of them sharing a top-level name) of at least own
// bytes is a layer of its own; everything smaller is hashed by its name into
// groups of about group bytes, so one small package's change re-ships one
// group. A distribution is never split: the dynamic loader resolves
// $ORIGIN in an extension's RPATH (tensorflow/python/... → ../../
// libtensorflow_framework.so.2) from the real path of the linked directory,
// which must hold the whole distribution.
type layerSizes struct{ own, group int64 }

// sizes are PackLayers'; tests make them small.
var sizes = layerSizes{own: 16 << 20, group: 16 << 20}

const (
	// maxGroups bounds the number of groups whatever the env's size.
	maxGroups = 64
	// maxRecord bounds a dist-info RECORD read to find a distribution's
	// top-level names (TensorFlow's is ~2 MB).
	maxRecord = 64 << 20
)

// Layer is one archive of a layered environment.
type Layer struct {
	// Name says what it holds: "base" (everything outside site-packages,
	// and the manifest), a distribution's top-level names, or "group-NN"
	// for small distributions hashed together.
	Name string `json:"name"`
	// Roots are the env-relative paths (slash-separated) the layer holds
	// whole; the base layer holds everything no other layer does.
	Roots        []string `json:"roots,omitempty"`
	Files        int      `json:"files"`
	Bytes        int64    `json:"bytes"` // uncompressed content
	ArchiveBytes int64    `json:"archive_bytes"`
	SHA256       string   `json:"sha256"`
	// Print identifies the layer's entries from their metadata (as
	// Fingerprint does for a whole env), "" when something in it changed
	// too recently to be trusted (Print.Settled). A later PackLayers given
	// this Layer in LayerOptions.Known does not pack it again.
	Print string `json:"print,omitempty"`
	// Path is the archive PackLayers wrote, "" for a layer it knew
	// (LayerOptions.Known) and did not write again. Not serialized.
	Path string `json:"-"`
}

// LayerOptions tune PackLayers.
type LayerOptions struct {
	Options
	// Known are layers packed earlier (from the local pack cache): a
	// planned layer whose Print matches one is taken as is, without being
	// read or compressed again.
	Known []Layer
}

// Layered is what PackLayers did: the environment's manifest (totals over
// all layers) and its layers, base first.
type Layered struct {
	Manifest Manifest `json:"manifest"`
	Layers   []Layer  `json:"layers"`
}

// ArchiveName is the layer's file name in the HDFS cache: a .tar.gz the
// NodeManager unpacks, named after what it holds (env-layer.numpy+numpy.libs
// .tar.gz, env-layer.group-03.tar.gz), so `tfyarn cache list` says it.
// Characters a container link or an HDFS path cannot take become '_'.
func (l Layer) ArchiveName() string {
	name := l.Name
	if len(name) > maxLayerNameInArchive {
		name = name[:maxLayerNameInArchive]
	}
	name = strings.Map(func(r rune) rune {
		if r < 0x80 && (r == '.' || r == '_' || r == '-' || r == '+' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, name)
	return LayerArchivePrefix + name + ".tar.gz"
}

// LayerArchivePrefix begins every layer's file name in the HDFS cache.
const LayerArchivePrefix = "env-layer."

// maxLayerNameInArchive keeps a layer's cache name well below a file
// name's 255 bytes.
const maxLayerNameInArchive = 100

// PackLayers packs the venv in dir as several archives written into outDir
// (0.tar.gz, 1.tar.gz, ...), each unpacked by YARN into a directory of its
// own; Assemble joins those directories into one that is the same tree as
// Pack's archive unpacked (apart from the manifest, which only the base
// layer carries, with the base layer's own counts). Each layer is packed
// like Pack's archive (same order, times, modes, shebangs, compression), so
// the same environment gives the same layers, byte for byte, on any machine,
// and a layer whose distributions did not change keeps its digest.
//
// Conda environments are refused (ErrLayersConda): their interpreter finds
// its prefix from its real path, which a linked tree would move.
func PackLayers(ctx context.Context, dir, outDir string, opts LayerOptions) (Layered, error) {
	info, err := detect(dir)
	if err != nil {
		return Layered{}, &Error{Op: "pack", Path: dir, Err: err}
	}
	if real, err := filepath.EvalSymlinks(info.root); err == nil {
		// A link to the env (a worktree's .venv): walk what it points to.
		info.root = real
	}
	if info.kind != KindVenv {
		return Layered{}, &Error{Op: "pack", Path: dir, Err: ErrLayersConda}
	}
	if opts.Level < 0 || opts.Level > 9 {
		return Layered{}, &Error{Op: "pack", Path: dir, Err: fmt.Errorf("gzip level %d: expected 1 to 9", opts.Level)}
	}
	plan, err := planLayers(ctx, info.root)
	if err != nil {
		return Layered{}, &Error{Op: "pack", Path: dir, Err: err}
	}
	out := Layered{Manifest: Manifest{Kind: info.kind, Prefixes: info.prefixes, PythonVersion: info.version, Home: info.home}}
	out.Manifest.BaseInterpreter = baseInterpreter(info.root, info.prefixes, info.exe, info.home)
	known := map[string]Layer{}
	for _, k := range opts.Known {
		if k.Print != "" && k.SHA256 != "" {
			known[k.Print] = k
		}
	}
	for i := range plan.layers {
		l := plan.layers[i]
		takenAt := time.Now()
		pr, err := layerPrint(ctx, info, plan, i, opts.Options)
		if err != nil {
			return Layered{}, &Error{Op: "pack", Path: dir, Err: err}
		}
		if k, ok := known[pr.Sum]; ok && pr.Settled(takenAt) {
			k.Path = ""
			out.Manifest.Files += k.Files
			out.Manifest.Bytes += k.Bytes
			out.Manifest.ArchiveBytes += k.ArchiveBytes
			out.Layers = append(out.Layers, k)
			continue
		}
		if pr.Settled(takenAt) {
			l.Print = pr.Sum
		}
		l.Path = filepath.Join(outDir, fmt.Sprintf("%d.tar.gz", i))
		m, err := packLayer(ctx, info, plan, i, out.Manifest, l.Path, opts.Options)
		if err != nil {
			return Layered{}, &Error{Op: "pack", Path: dir, Err: err}
		}
		l.Files, l.Bytes, l.ArchiveBytes, l.SHA256 = m.Files, m.Bytes, m.ArchiveBytes, m.SHA256
		out.Manifest.add(m)
		out.Layers = append(out.Layers, l)
	}
	return out, nil
}

// layerPrint fingerprints what packLayer would archive for layer i, from
// metadata alone (appendEntry, as Fingerprint).
func layerPrint(ctx context.Context, info envInfo, plan layerPlan, i int, opts Options) (Print, error) {
	keep := plan.selector(i)
	b := appendStr(nil, fingerprintVersion+"/layer")
	b = appendNum(b, int64(opts.Level))
	for _, p := range info.prefixes {
		b = appendStr(b, p)
	}
	// Its name and roots: the same files planned otherwise are another layer.
	b = appendStr(b, plan.layers[i].Name)
	for _, r := range plan.layers[i].Roots {
		b = appendStr(b, r)
	}
	h := sha256.New()
	var pr Print
	err := filepath.WalkDir(info.root, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(info.root, full)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		keepIt, descend := keep(rel, d.IsDir())
		if !keepIt {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() && (d.Name() == "__pycache__" || !descend) {
			return filepath.SkipDir
		}
		if strings.HasSuffix(d.Name(), ".pyc") || rel == ManifestName {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		pr.Entries++
		if b, err = appendEntry(b, osMeta{}, full, rel, fi, &pr.Newest); err != nil {
			return err
		}
		if len(b) > 1<<16 {
			h.Write(b)
			b = b[:0]
		}
		return nil
	})
	if err != nil {
		return Print{}, err
	}
	h.Write(b)
	pr.Sum = hex.EncodeToString(h.Sum(nil))
	return pr, nil
}

// ErrLayersConda: PackLayers packs venvs only.
var ErrLayersConda = fmt.Errorf("layers: only a venv can be shipped in layers (a conda env's interpreter finds its prefix from its real path)")

// add sums another layer's counts and lists into m.
func (m *Manifest) add(o Manifest) {
	m.Files += o.Files
	m.Dirs += o.Dirs
	m.Symlinks += o.Symlinks
	m.Bytes += o.Bytes
	m.ArchiveBytes += o.ArchiveBytes
	m.ShebangsRewritten = append(m.ShebangsRewritten, o.ShebangsRewritten...)
	m.ExternalSymlinks = append(m.ExternalSymlinks, o.ExternalSymlinks...)
	m.PrefixTextFiles = append(m.PrefixTextFiles, o.PrefixTextFiles...)
	m.PrefixBinaryFiles = append(m.PrefixBinaryFiles, o.PrefixBinaryFiles...)
	m.Skipped.PycacheDirs += o.Skipped.PycacheDirs
	m.Skipped.PycFiles += o.Skipped.PycFiles
	m.Skipped.Special += o.Skipped.Special
}

// packLayer writes layer i of plan to file out; the base layer (0) also
// gets the manifest, with its own counts and the environment's facts.
func packLayer(ctx context.Context, info envInfo, plan layerPlan, i int, facts Manifest, out string, opts Options) (Manifest, error) {
	f, err := os.Create(out)
	if err != nil {
		return Manifest{}, err
	}
	defer f.Close()
	m := Manifest{Kind: facts.Kind, Prefixes: facts.Prefixes, PythonVersion: facts.PythonVersion, Home: facts.Home, BaseInterpreter: facts.BaseInterpreter}
	hw := &hashWriter{w: f, h: sha256.New()}
	zw, err := newGzip(hw, opts)
	if err != nil {
		return Manifest{}, err
	}
	p := newPacker(ctx, info, zw, &m)
	p.keep = plan.selector(i)
	err = filepath.WalkDir(info.root, p.visit)
	if err == nil && i == 0 {
		err = p.writeManifest()
	}
	if err == nil {
		err = p.tw.Close()
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		return Manifest{}, err
	}
	m.ArchiveBytes = hw.n
	m.SHA256 = hex.EncodeToString(hw.h.Sum(nil))
	return m, nil
}

// layerPlan is which layer holds each path: the layer of a path is that of
// its nearest ancestor-or-self among owner's keys, the base layer (0) if
// none.
type layerPlan struct {
	layers []Layer
	owner  map[string]int
	// above[i] holds the strict ancestors of layer i's roots: directories
	// its archive must have entries for, though another layer owns them.
	above []map[string]bool
}

func (pl layerPlan) ownerOf(rel string) int {
	for p := rel; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		if i, ok := pl.owner[p]; ok {
			return i
		}
	}
	return 0
}

// selector is packer.keep for layer i.
func (pl layerPlan) selector(i int) func(rel string, dir bool) (keep, descend bool) {
	return func(rel string, dir bool) (bool, bool) {
		own := pl.ownerOf(rel) == i
		if !dir {
			return own, false
		}
		if own || pl.above[i][rel] {
			return true, true
		}
		return false, false
	}
}

// piece is a candidate for a layer: paths that go together.
type piece struct {
	key   string   // stable across versions: what groups hash
	roots []string // env-relative
	bytes int64
	files int
}

// planLayers decides the layers of the environment at root.
func planLayers(ctx context.Context, root string) (layerPlan, error) {
	sites, err := filepath.Glob(filepath.Join(root, "lib", "python*", "site-packages"))
	if err != nil {
		return layerPlan{}, err
	}
	sort.Strings(sites)
	var pieces []piece
	for _, site := range sites {
		if st, err := os.Lstat(site); err != nil || !st.IsDir() {
			continue // lib64 → lib and the like: the real one is listed too
		}
		units, err := siteUnits(ctx, root, site)
		if err != nil {
			return layerPlan{}, err
		}
		pieces = append(pieces, units...)
	}
	var own, small []piece
	var smallBytes int64
	for _, p := range pieces {
		if p.bytes >= sizes.own {
			own = append(own, p)
		} else {
			small = append(small, p)
			smallBytes += p.bytes
		}
	}
	sort.Slice(own, func(i, j int) bool { return own[i].key < own[j].key })
	pl := layerPlan{owner: map[string]int{}, layers: []Layer{{Name: "base"}}}
	add := func(name string, roots []string) {
		i := len(pl.layers)
		sort.Strings(roots)
		pl.layers = append(pl.layers, Layer{Name: name, Roots: roots})
		for _, r := range roots {
			pl.owner[r] = i
		}
	}
	for _, p := range own {
		add(p.key, append([]string(nil), p.roots...))
	}
	groups := groupCount(smallBytes)
	byGroup := make([][]string, groups)
	for _, p := range small {
		g := groupOf(p.key, groups)
		byGroup[g] = append(byGroup[g], p.roots...)
	}
	for g, roots := range byGroup {
		if len(roots) > 0 {
			add(fmt.Sprintf("group-%02d", g), roots)
		}
	}
	pl.above = make([]map[string]bool, len(pl.layers))
	for i, l := range pl.layers {
		pl.above[i] = map[string]bool{}
		for _, r := range l.Roots {
			for d := path.Dir(r); d != "."; d = path.Dir(d) {
				pl.above[i][d] = true
			}
		}
	}
	return pl, nil
}

// groupCount is how many groups small pieces are hashed into: a power of
// two, so the count (and with it every piece's group) changes only when the
// small pieces' total doubles or halves.
func groupCount(bytes int64) int {
	n := 1
	for n < maxGroups && int64(n)*sizes.group < bytes {
		n *= 2
	}
	return n
}

func groupOf(key string, groups int) int {
	sum := sha256.Sum256([]byte(key))
	var v uint64 // the digest's first 8 bytes, big-endian
	for _, b := range sum[:8] {
		v = v<<8 | uint64(b)
	}
	return int(v % uint64(groups))
}

// siteUnits groups the entries of one site-packages directory into units
// that must stay together: a distribution's dist-info directory with the
// top-level names its RECORD lists, and distributions sharing a top-level
// name (a namespace package such as google/ or nvidia/) together.
func siteUnits(ctx context.Context, root, site string) ([]piece, error) {
	entries, err := os.ReadDir(site)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, site)
	if err != nil {
		return nil, err
	}
	rel = filepath.ToSlash(rel)
	parent := map[string]string{}
	find := func(x string) string {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	union := func(a, b string) {
		ra, rb := find(a), find(b)
		if ra == rb {
			return
		}
		if rb < ra {
			ra, rb = rb, ra
		}
		parent[rb] = ra
	}
	present := map[string]bool{}
	for _, e := range entries {
		if e.Name() == "__pycache__" {
			continue
		}
		present[e.Name()] = true
		parent[e.Name()] = e.Name()
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasSuffix(e.Name(), ".dist-info") {
			continue
		}
		tops, err := recordTops(filepath.Join(site, e.Name(), "RECORD"))
		if err != nil {
			return nil, err
		}
		for _, t := range tops {
			if present[t] {
				union(e.Name(), t)
			}
		}
	}
	members := map[string][]string{}
	for name := range present {
		r := find(name)
		members[r] = append(members[r], name)
	}
	var out []piece
	for _, names := range members {
		sort.Strings(names)
		p := piece{key: unitKey(names)}
		for _, n := range names {
			r := rel + "/" + n
			p.roots = append(p.roots, r)
			b, f, err := treeSize(ctx, filepath.Join(site, n))
			if err != nil {
				return nil, err
			}
			p.bytes += b
			p.files += f
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, nil
}

// unitKey names a unit by its importable top-level names, without versions
// (numpy-1.26.4.dist-info + numpy + numpy.libs → "numpy+numpy.libs"), so a
// distribution keeps its group across upgrades.
func unitKey(names []string) string {
	var plain, dists []string
	for _, n := range names {
		switch {
		case strings.HasSuffix(n, ".dist-info"), strings.HasSuffix(n, ".egg-info"):
			base := strings.TrimSuffix(strings.TrimSuffix(n, ".dist-info"), ".egg-info")
			if i := strings.IndexByte(base, '-'); i > 0 {
				base = base[:i]
			}
			dists = append(dists, strings.ToLower(base))
		default:
			plain = append(plain, n)
		}
	}
	if len(plain) == 0 {
		plain = dists
	}
	return strings.Join(plain, "+")
}

// recordTops reads a dist-info RECORD (CSV: path,hash,size) and returns
// the first components of the paths it lists inside site-packages.
func recordTops(record string) ([]string, error) {
	f, err := os.Open(record)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	seen := map[string]bool{}
	var out []string
	sc := bufio.NewScanner(io.LimitReader(f, maxRecord))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		p := line
		if strings.HasPrefix(p, `"`) {
			// A quoted path (it has a comma): up to the closing quote.
			if j := strings.Index(p[1:], `"`); j >= 0 {
				p = p[1 : 1+j]
			}
		} else if i := strings.IndexByte(p, ','); i >= 0 {
			p = p[:i]
		}
		top, _, _ := strings.Cut(p, "/")
		if top == "" || top == ".." || top == "." || seen[top] {
			continue
		}
		seen[top] = true
		out = append(out, top)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", record, err)
	}
	return out, nil
}

// treeSize is the content bytes and count of the regular files Pack would
// archive under p (without __pycache__ and *.pyc).
func treeSize(ctx context.Context, p string) (int64, int, error) {
	var bytes int64
	var files int
	err := filepath.WalkDir(p, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "__pycache__" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() || strings.HasSuffix(d.Name(), ".pyc") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		bytes += info.Size()
		files++
		return nil
	})
	return bytes, files, err
}
