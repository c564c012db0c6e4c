package envpack

// ManifestName is the file Pack adds at the root of every archive (as its
// last entry): the Manifest without the archive's own size and digest. The
// task side reads it (Relocate, CheckRuntime) after YARN unpacked the archive.
const ManifestName = ".envpack.json"

// Manifest describes a packed environment.
type Manifest struct {
	Kind Kind `json:"kind"`
	// Prefixes are the absolute paths the environment was known by when
	// packed (where it was created, where it is, with symlinks resolved):
	// what shebangs were rewritten from and what PrefixTextFiles contain.
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
	ExternalSymlinks []Symlink `json:"external_symlinks,omitempty"`
	// PrefixTextFiles are text files that still contain a prefix (activate
	// scripts, conda's .pc files and _sysconfigdata, ...): Relocate rewrites
	// them on the node. PrefixBinaryFiles contain a prefix inside binary data:
	// those are not rewritten (out of scope; conda-pack cannot either when the
	// new prefix is longer), so they only work where that prefix exists.
	PrefixTextFiles   []string `json:"prefix_text_files,omitempty"`
	PrefixBinaryFiles []string `json:"prefix_binary_files,omitempty"`

	Skipped Skipped `json:"skipped"`

	// Set on the Manifest Pack returns, not in the archive's own copy.
	ArchiveBytes int64  `json:"archive_bytes,omitempty"`
	SHA256       string `json:"sha256,omitempty"` // hex, of the .tar.gz
}

// Symlink is a link kept as is.
type Symlink struct {
	Path   string `json:"path"` // relative to the env, slash-separated
	Target string `json:"target"`
}

// Skipped counts what Pack left out on purpose.
type Skipped struct {
	// PycacheDirs and PycFiles: compiled bytecode embeds source paths and
	// mtimes (so it would make archives differ run to run) and Python
	// regenerates it where needed.
	PycacheDirs int `json:"pycache_dirs"`
	PycFiles    int `json:"pyc_files"`
	// Special files (sockets, FIFOs, devices) have no place in an archive.
	Special int `json:"special"`
}
