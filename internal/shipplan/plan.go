// Package shipplan decides what a job ships into every task's working
// directory (its script, Python environment, source directory, files and
// archives), under which names, and checks the local inputs before anything
// touches a cluster. The plan is one for both ways a job runs: client ships
// it to YARN through the HDFS cache, localrun lays it out on this machine
// for run --local.
package shipplan

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/envpack"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/taskspec"
)

// DefaultPython runs a job's script when the job names no interpreter and
// ships no environment.
const DefaultPython = "python3"

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
// under Name (a FILE resource for Inputs.Files, an ARCHIVE YARN unpacks
// into ./Name/ for Inputs.Archives).
type LocalFile struct {
	Path string
	// Name is the link name in the container; empty means the default:
	// the base name for files, the base name without its archive suffix
	// for archives (x.zip → x, data.tar.gz → data).
	Name string
}

// Inputs are what a job ships: its local script (run by Python with Args),
// Python environment, source directory, files and archives, and the
// environment its tasks get.
type Inputs struct {
	Script    string
	Args      []string
	Python    string
	PythonEnv string
	SrcDir    string
	Files     []LocalFile
	Archives  []LocalFile
	// Env is the job's task environment: a name tfyarn sets in every task
	// itself (contract.SetForTasks) is refused, since the job's value
	// would be ignored without a word.
	Env map[string]string
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
			return LocalFile{}, fmt.Errorf("%q: %w", spec, err)
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

// Kind is how a shipped item reaches the cache and the containers.
type Kind int

const (
	File    Kind = iota // uploaded as is, a FILE resource
	Archive             // uploaded as is, an ARCHIVE resource
	EnvDir              // packed with envpack, then an ARCHIVE
	SrcDir              // packed with envpack.PackDir, then an ARCHIVE
	// EnvLayers is a venv packed with envpack.PackLayers: each layer a
	// PUBLIC ARCHIVE of its own (LayerLinkName), which the launcher
	// assembles into the item's link.
	EnvLayers
)

// IsEnvDir reports whether k is a Python environment shipped as a
// directory (packed whole or in layers): what a local run uses in place.
func (k Kind) IsEnvDir() bool { return k == EnvDir || k == EnvLayers }

// LayerLinkName is the name in the containers of layer i of a layered
// environment. Names with its prefix are the layers' alone.
func LayerLinkName(i int) string { return fmt.Sprintf("%s%02d", layerLinkPrefix, i) }

const layerLinkPrefix = EnvLinkName + ".layer"

// Item is one thing every task container gets.
type Item struct {
	Link  string // name in the container's working directory
	Local string // the local file or directory
	Kind  Kind
	Cache string // name in the HDFS cache
	// Access is who may read it in the user's own HDFS cache: environments
	// are Public (installed packages, heavy: the NodeManager keeps one copy
	// per node), what the user wrote (script, files, archives, source
	// directory) Private, since it can hold secrets.
	Access hdfs.Access
	// OwnCopy: localized PRIVATE whatever its cache file's mode, since
	// the launcher rewrites it (NeedsOwnCopy). Env archives only; an env
	// directory is decided once packed.
	OwnCopy bool
}

// Plan is what a job ships besides the tfyarn binary, checked against the
// local filesystem before anything touches the cluster.
type Plan struct {
	Items []Item
	// Command and Args replace the job's when it has a script: the Python
	// that runs it and the script's path in the container, then the
	// script's arguments.
	Command string
	Args    []string
	// PythonEnv and PythonPath are link names for the task launcher.
	PythonEnv  string
	PythonPath []string
}

// Script is the script's path in the container (under its link, or the
// source directory's), "" when the job runs a command.
func (p Plan) Script() string {
	if len(p.Args) == 0 {
		return ""
	}
	return p.Args[0]
}

// Make checks the job's local inputs (script, environment, files,
// archives, source directory) and decides what goes where. Every problem
// is a *taskspec.ValidationError naming the file.
func Make(job Inputs) (Plan, error) {
	if err := CheckTaskEnv(job.Env); err != nil {
		return Plan{}, err
	}
	m := planMaker{taken: map[string]string{contract.BinaryName: "tfyarn's launcher"}}
	if err := m.addPythonEnv(job); err != nil {
		return Plan{}, err
	}
	srcAbs, err := m.addSrcDir(job)
	if err != nil {
		return Plan{}, err
	}
	if err := m.addScript(job, srcAbs); err != nil {
		return Plan{}, err
	}
	if err := m.addFilesAndArchives(job); err != nil {
		return Plan{}, err
	}
	if err := m.checkLayerNames(); err != nil {
		return Plan{}, err
	}
	unifyAccess(m.p.Items)
	return m.p, nil
}

// planMaker is Make's state: the plan so far and the names it takes in the
// container, each with what takes it.
type planMaker struct {
	p     Plan
	taken map[string]string
}

// claim takes the name link in the container for what, or says who has it.
func (m *planMaker) claim(link, what string) error {
	if err := checkLinkName(link); err != nil {
		return invalidf("%s: %v", what, err)
	}
	if other, ok := m.taken[link]; ok {
		return invalidf("%s and %s both want the name %q in the container; rename one (PATH#NAME)", what, other, link)
	}
	m.taken[link] = what
	return nil
}

// addPythonEnv plans the job's Python environment (--env), if any.
func (m *planMaker) addPythonEnv(job Inputs) error {
	if job.PythonEnv == "" {
		return nil
	}
	item, err := envItem(job.PythonEnv)
	if err != nil {
		return err
	}
	if err := m.claim(item.Link, "env "+job.PythonEnv); err != nil {
		return err
	}
	if item.Kind == EnvLayers {
		m.taken[layerLinkPrefix] = "the layers of env " + job.PythonEnv
	}
	m.p.Items = append(m.p.Items, item)
	m.p.PythonEnv = item.Link
	return nil
}

// addSrcDir plans the job's source directory (--src-dir), if any, and returns
// its absolute path ("" for none).
func (m *planMaker) addSrcDir(job Inputs) (srcAbs string, err error) {
	if job.SrcDir == "" {
		return "", nil
	}
	st, err := os.Stat(job.SrcDir)
	if err != nil {
		return "", invalidf("src dir %s: %v", job.SrcDir, unwrapPathError(err))
	}
	if !st.IsDir() {
		return "", invalidf("src dir %s is not a directory", job.SrcDir)
	}
	if srcAbs, err = filepath.Abs(job.SrcDir); err != nil {
		return "", invalidf("src dir %s: %v", job.SrcDir, err)
	}
	if err := envpack.CheckDirLinks(job.SrcDir); err != nil {
		return "", invalidf("src dir %s: %v", job.SrcDir, unwrapPathError(err))
	}
	if err := m.claim(SrcLinkName, "src dir "+job.SrcDir); err != nil {
		return "", err
	}
	m.p.Items = append(m.p.Items, Item{Link: SrcLinkName, Local: job.SrcDir, Kind: SrcDir, Cache: srcCacheName, Access: hdfs.Private})
	m.p.PythonPath = []string{SrcLinkName}
	return srcAbs, nil
}

// addScript plans the job's script, if any, and the command that runs it:
// from src/ when it is inside the source directory (srcAbs), else shipped
// on its own.
func (m *planMaker) addScript(job Inputs, srcAbs string) error {
	if job.Script == "" {
		return nil
	}
	if err := checkScript(job.Script); err != nil {
		return err
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
		if err := m.claim(scriptArg, "script "+job.Script); err != nil {
			return err
		}
		m.p.Items = append(m.p.Items, Item{Link: scriptArg, Local: job.Script, Kind: File, Cache: cacheName(job.Script), Access: hdfs.Private})
	}
	m.p.Command, m.p.Args = job.python(), append([]string{scriptArg}, job.Args...)
	return nil
}

// addFilesAndArchives plans the job's --files and --archives.
func (m *planMaker) addFilesAndArchives(job Inputs) error {
	for _, f := range job.Files {
		what := "file " + f.Path
		if err := checkRegular(f.Path, "file"); err != nil {
			return err
		}
		if err := m.claim(f.fileName(), what); err != nil {
			return err
		}
		m.p.Items = append(m.p.Items, Item{Link: f.fileName(), Local: f.Path, Kind: File, Cache: cacheName(f.Path), Access: hdfs.Private})
	}
	for _, a := range job.Archives {
		what := "archive " + a.Path
		if err := checkRegular(a.Path, "archive"); err != nil {
			return err
		}
		if archiveSuffix(a.Path, archiveSuffixes) == "" {
			return invalidf("archive %s: YARN unpacks only .tar.gz, .tgz, .tar, .zip and .jar files; ship other files with --files", a.Path)
		}
		if err := m.claim(a.archiveName(), what); err != nil {
			return err
		}
		if err := checkArchive(a.Path); err != nil {
			return err
		}
		m.p.Items = append(m.p.Items, Item{Link: a.archiveName(), Local: a.Path, Kind: Archive, Cache: cacheName(a.Path), Access: hdfs.Private})
	}
	return nil
}

// checkLayerNames refuses a name that a layered environment's layers use.
func (m *planMaker) checkLayerNames() error {
	if owner, ok := m.taken[layerLinkPrefix]; ok {
		for name, what := range m.taken {
			if name != layerLinkPrefix && strings.HasPrefix(name, layerLinkPrefix) {
				return invalidf("%s wants the name %q in the container, which %s use; rename it (PATH#NAME)", what, name, owner)
			}
		}
	}
	return nil
}

// unifyAccess makes items of one cache name, which may be one cache entry,
// private for all if for one, or the private one would close the entry
// after the public one was described to YARN as PUBLIC (its localization
// would fail).
func unifyAccess(items []Item) {
	private := map[string]bool{}
	for _, it := range items {
		private[it.Cache] = private[it.Cache] || it.Access == hdfs.Private
	}
	for i := range items {
		if private[items[i].Cache] {
			items[i].Access = hdfs.Private
		}
	}
}

// AccessOf is how a file of the given cache name that is not an item of
// the plan (the launcher) must be cached: Private if an item of that name
// is (the same content would be one entry).
func (p Plan) AccessOf(cache string, want hdfs.Access) hdfs.Access {
	for _, it := range p.Items {
		if it.Cache == cache && it.Access == hdfs.Private {
			return hdfs.Private
		}
	}
	return want
}

// envItem checks --env: a venv or conda env directory, or an archive of one.
func envItem(env string) (Item, error) {
	st, err := os.Stat(env)
	if err != nil {
		return Item{}, invalidf("env %s: %v", env, unwrapPathError(err))
	}
	if st.IsDir() {
		if !envpack.IsEnv(env) {
			return Item{}, invalidf("env %s is not a Python environment: expected a venv (pyvenv.cfg) or a conda env (conda-meta/), or an archive made by tfyarn pack", env)
		}
		if err := envpack.CheckEnvLinks(env); err != nil {
			return Item{}, invalidf("env %s: %v", env, unwrapPathError(err))
		}
		if envpack.IsVenv(env) {
			// Shipped in layers: see envpack.PackLayers. Through a link
			// (a worktree's .venv), the directory it names is packed and
			// fingerprinted.
			local := env
			if real, err := filepath.EvalSymlinks(env); err == nil {
				local = real
			}
			return Item{Link: EnvLinkName, Local: local, Kind: EnvLayers, Cache: envpack.LayerArchivePrefix}, nil
		}
		return Item{Link: EnvLinkName, Local: env, Kind: EnvDir, Cache: envCacheName}, nil
	}
	if !st.Mode().IsRegular() || archiveSuffix(env, envArchiveSuffixes) == "" {
		return Item{}, invalidf("env %s: expected an environment directory or a .tar.gz/.tgz archive of one (tfyarn pack)", env)
	}
	relocates, err := checkEnvArchive(env)
	if err != nil {
		return Item{}, err
	}
	return Item{Link: EnvLinkName, Local: env, Kind: Archive, Cache: cacheName(env), OwnCopy: relocates}, nil
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

func (j Inputs) python() string { return Python(j.PythonEnv, j.Python) }

// Python is the interpreter that runs a job's script in the containers,
// given its environment (env, "" for none) and its --python (python).
// Without an environment: python, else DefaultPython. With one: python
// inside it, env/bin/python by default; a relative path with a '/' is
// taken inside env/ (bin/python3.11 → env/bin/python3.11), an absolute path
// as is, and a bare name (python3.11) is looked up on the task's PATH,
// which env/bin leads.
func Python(env, python string) string {
	if env == "" {
		if python == "" {
			return DefaultPython
		}
		return python
	}
	switch p := python; {
	case p == "":
		return EnvLinkName + "/bin/python"
	case filepath.IsAbs(p) || !strings.Contains(p, "/"):
		return p
	default:
		return path.Join(EnvLinkName, filepath.ToSlash(p))
	}
}

// checkScript checks, before anything is created, that a job's script can
// be shipped: a readable regular file whose name does not clash with the
// launcher's.
func checkScript(script string) error {
	if err := CheckScriptFile(script); err != nil || script == "" {
		return err
	}
	if filepath.Base(script) == contract.BinaryName {
		return &taskspec.ValidationError{Message: fmt.Sprintf("script %s: the name %q is taken by tfyarn's launcher; rename the script", script, contract.BinaryName)}
	}
	return nil
}

// CheckScriptFile refuses, before anything starts, a script that is not a
// readable regular file: every task would fail with the same error. An empty
// name (no script) is fine.
func CheckScriptFile(script string) error {
	if script == "" {
		return nil
	}
	st, err := os.Stat(script)
	if err != nil {
		return &taskspec.ValidationError{Message: fmt.Sprintf("script %s: %v", script, errors.Unwrap(err))}
	}
	if !st.Mode().IsRegular() {
		return &taskspec.ValidationError{Message: fmt.Sprintf("script %s is not a regular file", script)}
	}
	return nil
}
