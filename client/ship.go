package client

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tfyarn/tfyarn/internal/envpack"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/localrun"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Link names in every task's working directory.
const (
	// EnvLinkName is where YARN unpacks the job's Python environment: the
	// tasks run ./env/bin/python (or --python inside it).
	EnvLinkName = "env"
	// SrcLinkName is where YARN unpacks the job's source directory, first
	// on the tasks' PYTHONPATH.
	SrcLinkName = "src"
	// envCacheName is a packed environment's name in the HDFS cache (the
	// NodeManager unpacks by the suffix).
	envCacheName = "env.tar.gz"
	srcCacheName = "src.tar.gz"
)

// LocalFile is a local file shipped into every task's working directory
// under Name (a FILE resource for Job.Files, an ARCHIVE YARN unpacks into
// ./Name/ for Job.Archives).
type LocalFile struct {
	Path string
	// Name is the link name in the container; empty means the default:
	// the base name for files, the base name without its archive suffix
	// for archives (x.zip → x, data.tar.gz → data).
	Name string
}

// archiveSuffixes are what the NodeManager unpacks (FSDownload goes by the
// lower-cased name), longest first so .tar.gz wins over .gz-less .tar.
var archiveSuffixes = []string{".tar.gz", ".tgz", ".tar", ".zip", ".jar"}

// envArchiveSuffixes are the archives --env takes (what tfyarn pack and
// conda-pack write).
var envArchiveSuffixes = []string{".tar.gz", ".tgz"}

// ParseLocalFile reads the CLI's PATH[#NAME] form of --files and
// --archives: NAME, after the last '#', is the link name in the container.
func ParseLocalFile(spec string) (LocalFile, error) {
	p, name, hasName := spec, "", false
	if i := strings.LastIndexByte(spec, '#'); i >= 0 {
		p, name, hasName = spec[:i], spec[i+1:], true
	}
	if p == "" {
		return LocalFile{}, fmt.Errorf("%q: expected PATH or PATH#NAME", spec)
	}
	if hasName {
		if err := checkLinkName(name); err != nil {
			return LocalFile{}, fmt.Errorf("%q: %v", spec, err)
		}
	}
	return LocalFile{Path: p, Name: name}, nil
}

func (f LocalFile) fileName() string {
	if f.Name != "" {
		return f.Name
	}
	return filepath.Base(f.Path)
}

func (f LocalFile) archiveName() string {
	if f.Name != "" {
		return f.Name
	}
	base := filepath.Base(f.Path)
	if suf := archiveSuffix(base, archiveSuffixes); suf != "" {
		return base[:len(base)-len(suf)]
	}
	return base
}

// archiveSuffix returns the suffix of name among suffixes (case
// insensitive), "" for none.
func archiveSuffix(name string, suffixes []string) string {
	lower := strings.ToLower(name)
	for _, s := range suffixes {
		if strings.HasSuffix(lower, s) && len(lower) > len(s) {
			return name[len(name)-len(s):]
		}
	}
	return ""
}

// checkLinkName accepts one plain path component of the characters
// linkNameChars. The NodeManager writes each link name into its launch
// script between double quotes (`ln -sf -- "SRC" "NAME"`), where bash
// would expand $, ` and \, and parses it as a Hadoop Path, where ':'
// starts a URI scheme: no such character may reach it.
func checkLinkName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return fmt.Errorf("invalid name %q in the container", name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("invalid name %q in the container: must not contain '/'", name)
	case len(name) > maxLinkName:
		return fmt.Errorf("invalid name %q in the container: %d bytes, at most %d", name, len(name), maxLinkName)
	case strings.ContainsFunc(name, func(r rune) bool { return !strings.ContainsRune(linkNameChars, r) }):
		return fmt.Errorf("invalid name %q in the container: use only letters, digits and . _ - + @ , = (name it with PATH#NAME)", name)
	}
	return nil
}

// linkNameChars are the characters of a name in the container: none has a
// meaning to bash between double quotes, to YARN's variable expansion
// ({{ }} <CPS> <LOG_DIR>) or to Hadoop's Path.
const linkNameChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+@,="

// maxLinkName is the longest file name Linux allows.
const maxLinkName = 255

// cacheName is a local file's name in the HDFS cache: its base name, with
// every character outside linkNameChars replaced by '_'. The NodeManager
// localizes a resource under its HDFS name and writes that path into its
// launch script between double quotes (`ln -sf -- "PATH" "NAME"`), so
// `x$(cmd).csv` would run cmd; Hadoop's paths reject ':'. The suffix
// survives, which is what the NodeManager unpacks archives by.
func cacheName(local string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(linkNameChars, r) {
			return r
		}
		return '_'
	}, filepath.Base(local))
}

// itemKind is how a shipped item reaches the cache and the containers.
type itemKind int

const (
	itemFile    itemKind = iota // uploaded as is, a FILE resource
	itemArchive                 // uploaded as is, an ARCHIVE resource
	itemEnvDir                  // packed with envpack, then an ARCHIVE
	itemSrcDir                  // packed with envpack.PackDir, then an ARCHIVE
	// itemEnvLayers is a venv packed with envpack.PackLayers: each layer
	// a PUBLIC ARCHIVE of its own (LayerLinkName), which the launcher
	// assembles into the item's link.
	itemEnvLayers
)

// LayerLinkName is the name in the containers of layer i of a layered
// environment. Names with its prefix are the layers' alone.
func LayerLinkName(i int) string { return fmt.Sprintf("%s%02d", layerLinkPrefix, i) }

const layerLinkPrefix = EnvLinkName + ".layer"

// shipItem is one thing every task container gets.
type shipItem struct {
	link  string // name in the container's working directory
	local string // the local file or directory
	kind  itemKind
	cache string // name in the HDFS cache
	// access is who may read it in the user's own HDFS cache: environments
	// are Public (installed packages, heavy: the NodeManager keeps one copy
	// per node), what the user wrote (script, files, archives, source
	// directory) Private, since it can hold secrets.
	access hdfs.Access
	// ownCopy: localized PRIVATE whatever its cache file's mode, since
	// the launcher rewrites it (envNeedsOwnCopy). Env archives only;
	// an env directory is decided once packed.
	ownCopy bool
}

// shipPlan is what a job ships besides the tfyarn binary, checked against
// the local filesystem before anything touches the cluster.
type shipPlan struct {
	items []shipItem
	// command and args replace the job's when it has a script: the Python
	// that runs it and the script's path in the container.
	command string
	args    []string
	// pythonEnv and pythonPath are link names for the task launcher.
	pythonEnv  string
	pythonPath []string
}

// planShipping checks the job's local inputs (script, environment, files,
// archives, source directory) and decides what goes where. Every problem
// is a *taskspec.ValidationError naming the file.
func planShipping(job Job) (shipPlan, error) {
	var p shipPlan
	taken := map[string]string{BinaryName: "tfyarn's launcher"}
	claim := func(link, what string) error {
		if err := checkLinkName(link); err != nil {
			return invalidf("%s: %v", what, err)
		}
		if other, ok := taken[link]; ok {
			return invalidf("%s and %s both want the name %q in the container; rename one (PATH#NAME)", what, other, link)
		}
		taken[link] = what
		return nil
	}

	if job.PythonEnv != "" {
		item, err := envItem(job.PythonEnv)
		if err != nil {
			return shipPlan{}, err
		}
		if err := claim(item.link, "env "+job.PythonEnv); err != nil {
			return shipPlan{}, err
		}
		if item.kind == itemEnvLayers {
			taken[layerLinkPrefix] = "the layers of env " + job.PythonEnv
		}
		p.items = append(p.items, item)
		p.pythonEnv = item.link
	}
	var srcAbs string
	if job.SrcDir != "" {
		st, err := os.Stat(job.SrcDir)
		if err != nil {
			return shipPlan{}, invalidf("src dir %s: %v", job.SrcDir, unwrapPathError(err))
		}
		if !st.IsDir() {
			return shipPlan{}, invalidf("src dir %s is not a directory", job.SrcDir)
		}
		if srcAbs, err = filepath.Abs(job.SrcDir); err != nil {
			return shipPlan{}, invalidf("src dir %s: %v", job.SrcDir, err)
		}
		if err := envpack.CheckDirLinks(job.SrcDir); err != nil {
			return shipPlan{}, invalidf("src dir %s: %v", job.SrcDir, unwrapPathError(err))
		}
		if err := claim(SrcLinkName, "src dir "+job.SrcDir); err != nil {
			return shipPlan{}, err
		}
		p.items = append(p.items, shipItem{link: SrcLinkName, local: job.SrcDir, kind: itemSrcDir, cache: srcCacheName, access: hdfs.Private})
		p.pythonPath = []string{SrcLinkName}
	}
	if job.Script != "" {
		if err := checkScript(job.Script); err != nil {
			return shipPlan{}, err
		}
		scriptArg := ""
		if srcAbs != "" {
			if abs, err := filepath.Abs(job.Script); err == nil {
				if rel, err := filepath.Rel(srcAbs, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
					// Shipped inside src/: run it from there, so its
					// siblings and data files are beside it.
					scriptArg = path.Join(SrcLinkName, filepath.ToSlash(rel))
				}
			}
		}
		if scriptArg == "" {
			scriptArg = filepath.Base(job.Script)
			if err := claim(scriptArg, "script "+job.Script); err != nil {
				return shipPlan{}, err
			}
			p.items = append(p.items, shipItem{link: scriptArg, local: job.Script, kind: itemFile, cache: cacheName(job.Script), access: hdfs.Private})
		}
		p.command, p.args = job.python(), append([]string{scriptArg}, job.Args...)
	}
	for _, f := range job.Files {
		what := "file " + f.Path
		if err := checkRegular(f.Path, "file"); err != nil {
			return shipPlan{}, err
		}
		if err := claim(f.fileName(), what); err != nil {
			return shipPlan{}, err
		}
		p.items = append(p.items, shipItem{link: f.fileName(), local: f.Path, kind: itemFile, cache: cacheName(f.Path), access: hdfs.Private})
	}
	for _, a := range job.Archives {
		what := "archive " + a.Path
		if err := checkRegular(a.Path, "archive"); err != nil {
			return shipPlan{}, err
		}
		if archiveSuffix(a.Path, archiveSuffixes) == "" {
			return shipPlan{}, invalidf("archive %s: YARN unpacks only .tar.gz, .tgz, .tar, .zip and .jar files; ship other files with --files", a.Path)
		}
		if err := claim(a.archiveName(), what); err != nil {
			return shipPlan{}, err
		}
		if err := checkArchive(a.Path); err != nil {
			return shipPlan{}, err
		}
		p.items = append(p.items, shipItem{link: a.archiveName(), local: a.Path, kind: itemArchive, cache: cacheName(a.Path), access: hdfs.Private})
	}
	if owner, ok := taken[layerLinkPrefix]; ok {
		for name, what := range taken {
			if name != layerLinkPrefix && strings.HasPrefix(name, layerLinkPrefix) {
				return shipPlan{}, invalidf("%s wants the name %q in the container, which %s use; rename it (PATH#NAME)", what, name, owner)
			}
		}
	}
	// Items of one cache name may be one cache entry: private for all if
	// for one, or the private one would close the entry after the public
	// one was described to YARN as PUBLIC (its localization would fail).
	private := map[string]bool{}
	for _, it := range p.items {
		private[it.cache] = private[it.cache] || it.access == hdfs.Private
	}
	for i := range p.items {
		if private[p.items[i].cache] {
			p.items[i].access = hdfs.Private
		}
	}
	return p, nil
}

// accessOf is how a file of the given cache name that is not an item of
// the plan (the launcher) must be cached: Private if an item of that name
// is (the same content would be one entry).
func (p shipPlan) accessOf(cache string, want hdfs.Access) hdfs.Access {
	for _, it := range p.items {
		if it.cache == cache && it.access == hdfs.Private {
			return hdfs.Private
		}
	}
	return want
}

// envItem checks --env: a venv or conda env directory, or an archive of one.
func envItem(env string) (shipItem, error) {
	st, err := os.Stat(env)
	if err != nil {
		return shipItem{}, invalidf("env %s: %v", env, unwrapPathError(err))
	}
	if st.IsDir() {
		if !envpack.IsEnv(env) {
			return shipItem{}, invalidf("env %s is not a Python environment: expected a venv (pyvenv.cfg) or a conda env (conda-meta/), or an archive made by tfyarn pack", env)
		}
		if err := envpack.CheckEnvLinks(env); err != nil {
			return shipItem{}, invalidf("env %s: %v", env, unwrapPathError(err))
		}
		if envpack.IsVenv(env) {
			// Shipped in layers: see envpack.PackLayers. Through a link
			// (a worktree's .venv), the directory it names is packed and
			// fingerprinted.
			local := env
			if real, err := filepath.EvalSymlinks(env); err == nil {
				local = real
			}
			return shipItem{link: EnvLinkName, local: local, kind: itemEnvLayers, cache: envpack.LayerArchivePrefix}, nil
		}
		return shipItem{link: EnvLinkName, local: env, kind: itemEnvDir, cache: envCacheName}, nil
	}
	if !st.Mode().IsRegular() || archiveSuffix(env, envArchiveSuffixes) == "" {
		return shipItem{}, invalidf("env %s: expected an environment directory or a .tar.gz/.tgz archive of one (tfyarn pack)", env)
	}
	relocates, err := checkEnvArchive(env)
	if err != nil {
		return shipItem{}, err
	}
	return shipItem{link: EnvLinkName, local: env, kind: itemArchive, cache: cacheName(env), ownCopy: relocates}, nil
}

func checkRegular(p, what string) error {
	st, err := os.Stat(p)
	if err != nil {
		return invalidf("%s %s: %v", what, p, unwrapPathError(err))
	}
	if !st.Mode().IsRegular() {
		return invalidf("%s %s is not a regular file", what, p)
	}
	return nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func invalidf(format string, args ...any) error {
	return &taskspec.ValidationError{Message: fmt.Sprintf(format, args...)}
}

// python is the interpreter that runs the job's script in the containers.
// Without an environment: Python, else DefaultPython. With one: Python
// inside it, env/bin/python by default; a relative path with a '/' is
// taken inside env/ (bin/python3.11 → env/bin/python3.11), an absolute path
// as is, and a bare name (python3.11) is looked up on the task's PATH,
// which env/bin leads.
func (j Job) python() string {
	if j.PythonEnv == "" {
		if j.Python == "" {
			return DefaultPython
		}
		return j.Python
	}
	switch p := j.Python; {
	case p == "":
		return EnvLinkName + "/bin/python"
	case filepath.IsAbs(p) || !strings.Contains(p, "/"):
		return p
	default:
		return path.Join(EnvLinkName, filepath.ToSlash(p))
	}
}

// CheckLocalFiles checks, as Submit does before anything else, that the
// job's script, Python environment, files, archives and source directory
// exist, are of the right kind and get distinct names in the containers.
// Its errors are *taskspec.ValidationError.
func CheckLocalFiles(job Job) error {
	_, err := planShipping(job)
	return err
}

// PlanLocal is the job's shipping plan, the one Submit ships to YARN, for
// `run --local` (localrun.Stage lays it out on this machine): the same link
// names, PYTHONPATH entries, interpreter and script. It checks what
// CheckLocalFiles does, with the same errors.
func PlanLocal(job Job) (localrun.Shipment, error) {
	if err := checkTaskEnv(job.Env); err != nil {
		return localrun.Shipment{}, err
	}
	p, err := planShipping(job)
	if err != nil {
		return localrun.Shipment{}, err
	}
	return p.local(), nil
}

// local is p in localrun's terms.
func (p shipPlan) local() localrun.Shipment {
	sh := localrun.Shipment{
		Python:     p.command,
		PythonEnv:  p.pythonEnv,
		PythonPath: append([]string(nil), p.pythonPath...),
	}
	if len(p.args) > 0 {
		sh.Script = p.args[0]
	}
	for _, it := range p.items {
		kind := localrun.ShipFile
		switch it.kind {
		case itemArchive:
			kind = localrun.ShipArchive
		case itemEnvDir, itemEnvLayers:
			kind = localrun.ShipEnvDir
		case itemSrcDir:
			kind = localrun.ShipSrcDir
		}
		sh.Items = append(sh.Items, localrun.ShipItem{Link: it.link, Local: it.local, Kind: kind})
	}
	return sh
}
