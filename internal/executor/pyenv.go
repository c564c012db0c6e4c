package executor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/buildinfo"
	"github.com/tfyarn/tfyarn/internal/envpack"
	pythonsdk "github.com/tfyarn/tfyarn/python"
)

// envCheckTimeout bounds the environment's check (envpack.CheckRuntime
// starts its interpreter once; a cold start on a busy node can take seconds).
const envCheckTimeout = 60 * time.Second

// pythonDirs is where the job's Python environment and source
// directories are in the container (absolute; "" and nil for none).
type pythonDirs struct {
	envDir string
	paths  []string
}

// environ returns env set up for them (PythonEnviron).
func (d pythonDirs) environ(env []string) []string {
	if d.envDir == "" && len(d.paths) == 0 {
		return env
	}
	return PythonEnviron(env, d.envDir, d.paths)
}

// preparePython readies the job's Python environment and source
// directories, and tfyarn's own Python package, before the program starts: it fixes a conda environment's
// prefixes for where YARN unpacked it (envpack.Relocate), checks that the
// environment's interpreter runs on this node (envpack.CheckRuntime: a
// venv needs its base interpreter at the same path) and returns where they
// are, for the program's environment. Its errors are one line meant for
// the job's diagnostics.
func preparePython(ctx context.Context, cfg *Config) (pythonDirs, error) {
	base := cfg.Dir
	if base == "" {
		wd, err := os.Getwd()
		if err != nil {
			return pythonDirs{}, fmt.Errorf("env: finding the working directory: %w", err)
		}
		base = wd
	}
	sdk, err := pythonSDK(cfg, base)
	if err != nil {
		return pythonDirs{}, err
	}
	envDir := ""
	if cfg.PythonEnv != "" {
		envDir = absIn(base, cfg.PythonEnv)
		if err := assembleLayers(envDir, base, cfg.PythonEnvLayers); err != nil {
			return pythonDirs{}, err
		}
		if st, err := os.Stat(envDir); err != nil || !st.IsDir() {
			return pythonDirs{}, fmt.Errorf("env: the job's Python environment %s is not in the container (was it localized?)", cfg.PythonEnv)
		}
		if isCondaEnv(envDir) {
			if _, err := envpack.Relocate(ctx, envDir); err != nil {
				return pythonDirs{}, fmt.Errorf("env: relocating the conda environment: %w", err)
			}
		}
		cctx, cancel := context.WithTimeout(ctx, envCheckTimeout)
		err := envpack.CheckRuntimeContext(cctx, envDir)
		cancel()
		if err != nil {
			return pythonDirs{}, oneLine(err)
		}
	}
	paths := make([]string, 0, len(cfg.PythonPath)+1)
	for _, p := range cfg.PythonPath {
		paths = append(paths, absIn(base, p))
	}
	return pythonDirs{envDir: envDir, paths: append(paths, sdk)}, nil
}

// sdkDirName is the private directory of a task's working directory into which its launcher
// writes tfyarn's Python package, unless Config.PythonSDK names one written already.
const sdkDirName = ".tfyarn-python-sdk"

// pythonSDK is the directory holding tfyarn's Python package for the program's PYTHONPATH: the one
// the caller wrote (run --local, once for every task), or the package written now into the
// working directory (once per container: the launcher runs once in it).
func pythonSDK(cfg *Config, base string) (string, error) {
	if cfg.PythonSDK != "" {
		return cfg.PythonSDK, nil
	}
	dir := filepath.Join(base, sdkDirName)
	if err := pythonsdk.Extract(dir, buildinfo.Current().Version); err != nil {
		return "", fmt.Errorf("env: writing tfyarn's Python package into the working directory: %w", err)
	}
	return dir, nil
}

// assembleLayers makes envDir from the unpacked layers of a layered
// environment (none: nothing to do). A launcher started again in the same
// working directory finds it made already.
func assembleLayers(envDir, base string, layers []string) error {
	if len(layers) == 0 {
		return nil
	}
	if _, err := os.Lstat(envDir); err == nil {
		return nil
	}
	dirs := make([]string, len(layers))
	for i, l := range layers {
		dirs[i] = absIn(base, l)
		if st, err := os.Stat(dirs[i]); err != nil || !st.IsDir() {
			return fmt.Errorf("env: layer %s of the job's Python environment is not in the container (was it localized?)", l)
		}
	}
	if err := envpack.Assemble(envDir, dirs); err != nil {
		return fmt.Errorf("env: assembling the job's Python environment from its layers: %w", err)
	}
	return nil
}

// PythonEnviron returns env set up to run programs of the Python
// environment envDir (absolute; "" for none) with the directories of
// pythonPath (absolute) first on PYTHONPATH: envDir/bin first on PATH,
// VIRTUAL_ENV (a venv) or CONDA_PREFIX (a conda env) set, and PYTHONHOME,
// which would point the environment's interpreter at another installation,
// removed. --local uses it for `--env DIR` too.
func PythonEnviron(env []string, envDir string, pythonPath []string) []string {
	env = append([]string(nil), env...)
	if envDir != "" {
		path, _ := lookupEnv(env, "PATH")
		env = setEnv(env, "PATH", prependList(filepath.Join(envDir, "bin"), path), true)
		if isCondaEnv(envDir) {
			env = setEnv(env, "CONDA_PREFIX", envDir, true)
			env = setEnv(env, "CONDA_DEFAULT_ENV", envDir, true)
		} else {
			env = setEnv(env, "VIRTUAL_ENV", envDir, true)
		}
		env = unsetEnv(env, "PYTHONHOME")
	}
	if len(pythonPath) > 0 {
		old, _ := lookupEnv(env, "PYTHONPATH")
		env = setEnv(env, "PYTHONPATH", prependList(strings.Join(pythonPath, ":"), old), true)
	}
	return env
}

// PythonPathList splits a TFYARN_PYTHONPATH value.
func PythonPathList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ":") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func isCondaEnv(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "conda-meta"))
	return err == nil && st.IsDir()
}

func absIn(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

func prependList(first, rest string) string {
	if rest == "" {
		return first
	}
	return first + ":" + rest
}

func unsetEnv(env []string, name string) []string {
	prefix := name + "="
	out := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return out
}

// oneLine keeps an error to its first line: the diagnostics and the AM's
// task table show one.
func oneLine(err error) error {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		return fmt.Errorf("%s", msg[:i])
	}
	return err
}

// lookPathIn finds file the way a shell would with the program's own PATH
// (env's, not the launcher's: the job's environment puts env/bin first).
// Relative PATH entries are skipped, as exec.LookPath refuses them.
func lookPathIn(file string, env []string) (string, bool) {
	path, ok := lookupEnv(env, "PATH")
	if !ok || strings.Contains(file, "/") {
		return "", false
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, file)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}
