package client

import (
	"context"

	"github.com/tfyarn/tfyarn/internal/envpack"
)

// DefaultPackLevel is the gzip level Pack uses when PackRequest.Level is 0.
const DefaultPackLevel = envpack.DefaultLevel

// PackRequest says what Pack packs and where it writes it.
type PackRequest struct {
	// Dir is the environment: a venv (pyvenv.cfg) or a conda env (conda-meta/).
	Dir string
	// Out is the archive to write, replaced atomically; with Layers, the
	// directory to create for the layers (it must not exist).
	Out string
	// Level is the gzip level, 1 (fastest) to 9 (smallest); 0 means DefaultPackLevel.
	Level int
	// Layers writes the layers `run --env VENV` ships (one archive per large
	// distribution, the rest in groups), each under its HDFS cache name,
	// instead of one archive. Only a venv ships in layers.
	Layers bool
}

// PackResult describes a packed environment (its JSON form is the manifest
// the archive carries, plus the archive's size and digest).
type PackResult struct {
	Kind string `json:"kind"` // venv or conda
	// Prefixes are the absolute paths the environment was known by when
	// packed: what shebangs were rewritten from and PrefixTextFiles contain.
	Prefixes      []string `json:"prefixes"`
	PythonVersion string   `json:"python_version,omitempty"`
	// Home and BaseInterpreter (venvs only) are what every node must have at
	// the same path: pyvenv.cfg's home, and the interpreter bin/python runs.
	Home            string `json:"home,omitempty"`
	BaseInterpreter string `json:"base_interpreter,omitempty"`

	Files    int   `json:"files"`    // regular files archived
	Dirs     int   `json:"dirs"`     // directories archived
	Symlinks int   `json:"symlinks"` // symbolic links archived
	Bytes    int64 `json:"bytes"`    // content bytes of the files, uncompressed

	// ShebangsRewritten are the bin/ scripts whose absolute interpreter path
	// became one relative to the script (slash-separated, relative to the env).
	ShebangsRewritten []string `json:"shebangs_rewritten,omitempty"`
	// ExternalSymlinks point outside the environment: they work only where
	// the same target exists (a venv's bin/python → the base interpreter).
	ExternalSymlinks []struct {
		Path   string `json:"path"` // relative to the env, slash-separated
		Target string `json:"target"`
	} `json:"external_symlinks,omitempty"`
	// PrefixTextFiles still contain a prefix and are rewritten on the node;
	// PrefixBinaryFiles contain one inside binary data and are not, so they
	// work only where that prefix exists.
	PrefixTextFiles   []string `json:"prefix_text_files,omitempty"`
	PrefixBinaryFiles []string `json:"prefix_binary_files,omitempty"`

	// Skipped counts what was left out on purpose: compiled bytecode (it
	// embeds paths and mtimes) and special files (sockets, FIFOs, devices).
	Skipped struct {
		PycacheDirs int `json:"pycache_dirs"`
		PycFiles    int `json:"pyc_files"`
		Special     int `json:"special"`
	} `json:"skipped"`

	// ArchiveBytes and SHA256 are the archive's (with Layers, ArchiveBytes
	// is the layers' total).
	ArchiveBytes int64  `json:"archive_bytes,omitempty"`
	SHA256       string `json:"sha256,omitempty"` // hex, of the .tar.gz

	// Layers (PackRequest.Layers) are the archives written into Out, and
	// LayersSHA256 the digest that names the set in the HDFS cache.
	Layers       []PackLayer `json:"-"`
	LayersSHA256 string      `json:"-"`
}

// PackLayer is one archive of a venv packed in layers.
type PackLayer struct {
	// Name says what it holds: "base" (everything outside site-packages),
	// a distribution's top-level names, or "group-NN" for small ones.
	Name string `json:"name"`
	// Roots are the env-relative paths (slash-separated) the layer holds whole.
	Roots        []string `json:"roots,omitempty"`
	Files        int      `json:"files"`
	Bytes        int64    `json:"bytes"` // uncompressed content
	ArchiveBytes int64    `json:"archive_bytes"`
	SHA256       string   `json:"sha256"`
	// Print identifies the layer's entries from their metadata, so that an
	// unchanged layer is not packed again; "" when too recent to trust.
	Print string `json:"print,omitempty"`
	// Archive is the file written, under its name in the HDFS cache.
	Archive string `json:"archive"`
}

// Pack packs a venv or conda env into a relocatable, reproducible .tar.gz
// (or, with Layers, into the layers a run ships): the same environment
// always gives the same bytes. The archive or the layers' directory is
// written aside and renamed into place, so a failed or interrupted pack
// never leaves a partial result under the wanted name. The work is
// internal/envpack's.
func Pack(ctx context.Context, req PackRequest) (PackResult, error) {
	opts := envpack.Options{Level: req.Level}
	if !req.Layers {
		m, err := envpack.PackFile(ctx, req.Dir, req.Out, opts)
		return packResult(m), err
	}
	l, err := envpack.PackLayersDir(ctx, req.Dir, req.Out, opts)
	res := packResult(l.Manifest)
	for _, x := range l.Layers {
		res.Layers = append(res.Layers, PackLayer{Name: x.Name, Roots: x.Roots, Files: x.Files, Bytes: x.Bytes,
			ArchiveBytes: x.ArchiveBytes, SHA256: x.SHA256, Print: x.Print, Archive: x.Path})
	}
	res.LayersSHA256 = envpack.LayersDigest(l.Layers)
	return res, err
}

func packResult(m envpack.Manifest) PackResult {
	r := PackResult{Kind: string(m.Kind), Prefixes: m.Prefixes, PythonVersion: m.PythonVersion, Home: m.Home,
		BaseInterpreter: m.BaseInterpreter, Files: m.Files, Dirs: m.Dirs, Symlinks: m.Symlinks, Bytes: m.Bytes,
		ShebangsRewritten: m.ShebangsRewritten, PrefixTextFiles: m.PrefixTextFiles, PrefixBinaryFiles: m.PrefixBinaryFiles,
		ArchiveBytes: m.ArchiveBytes, SHA256: m.SHA256}
	r.Skipped.PycacheDirs, r.Skipped.PycFiles, r.Skipped.Special = m.Skipped.PycacheDirs, m.Skipped.PycFiles, m.Skipped.Special
	for _, s := range m.ExternalSymlinks {
		r.ExternalSymlinks = append(r.ExternalSymlinks, struct {
			Path   string `json:"path"`
			Target string `json:"target"`
		}{s.Path, s.Target})
	}
	return r
}
