package envpack

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Kind is what sort of Python environment a directory holds.
type Kind string

const (
	KindVenv  Kind = "venv"  // python -m venv / virtualenv / uv: has pyvenv.cfg
	KindConda Kind = "conda" // conda / mamba / micromamba: has conda-meta/
)

// ErrNotEnv is wrapped by the error for a directory that is neither kind.
var ErrNotEnv = errors.New("not a Python environment: expected a venv (pyvenv.cfg) or a conda env (conda-meta/)")

// envInfo is what detection learns about an environment before packing.
type envInfo struct {
	kind     Kind
	root     string   // absolute
	prefixes []string // absolute paths scripts and text files may name the env by, longest first
	version  string   // Python version, e.g. 3.11.7 ("" if unknown)
	home     string   // venv: pyvenv.cfg home
	exe      string   // venv: pyvenv.cfg executable (Python ≥ 3.11), else ""
}

func detect(dir string) (envInfo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return envInfo{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return envInfo{}, err
	}
	if !st.IsDir() {
		return envInfo{}, fmt.Errorf("not a directory: %w", ErrNotEnv)
	}
	info := envInfo{root: abs}
	switch {
	case isFile(filepath.Join(abs, "pyvenv.cfg")):
		info.kind = KindVenv
		cfg, err := readPyvenvCfg(filepath.Join(abs, "pyvenv.cfg"))
		if err != nil {
			return envInfo{}, err
		}
		info.home, info.exe = cfg["home"], cfg["executable"]
		info.version = cfg["version"]
		if info.version == "" {
			info.version = cfg["version_info"] // uv, virtualenv ≥ 20
		}
		// activate names the path the venv was created at, which is what
		// its scripts' shebangs say even if the directory moved since.
		if v := activatePrefix(filepath.Join(abs, "bin", "activate")); v != "" {
			info.prefixes = append(info.prefixes, v)
		}
	case isDir(filepath.Join(abs, "conda-meta")):
		info.kind = KindConda
		info.version = condaPythonVersion(filepath.Join(abs, "conda-meta"))
	default:
		return envInfo{}, ErrNotEnv
	}
	info.prefixes = append(info.prefixes, abs)
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		info.prefixes = append(info.prefixes, real)
	}
	info.prefixes = uniqueLongestFirst(info.prefixes)
	return info, nil
}

func isFile(p string) bool { st, err := os.Stat(p); return err == nil && st.Mode().IsRegular() }
func isDir(p string) bool  { st, err := os.Stat(p); return err == nil && st.IsDir() }

// readPyvenvCfg reads the "key = value" lines of pyvenv.cfg.
func readPyvenvCfg(p string) (map[string]string, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok {
			out[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
		}
	}
	return out, sc.Err()
}

var activateRE = regexp.MustCompile(`(?m)^\s*(?:export\s+)?VIRTUAL_ENV=["']?([^"'\n]+)["']?\s*$`)

// activatePrefix is the VIRTUAL_ENV bin/activate sets, if it is a plain absolute path.
func activatePrefix(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	m := activateRE.FindSubmatch(b)
	if m == nil || !filepath.IsAbs(string(m[1])) || strings.ContainsAny(string(m[1]), "$`") {
		return ""
	}
	return filepath.Clean(string(m[1]))
}

var condaPythonRE = regexp.MustCompile(`^python-(\d+\.\d+(?:\.\d+)?)-[^-]+\.json$`)

// condaPythonVersion reads the python package's version from conda-meta file names.
func condaPythonVersion(meta string) string {
	ents, err := os.ReadDir(meta)
	if err != nil {
		return ""
	}
	for _, e := range ents {
		if m := condaPythonRE.FindStringSubmatch(e.Name()); m != nil {
			return m[1]
		}
	}
	return ""
}

// uniqueLongestFirst dedups; longest first so a prefix that contains
// another (/a/env-real vs /a/env) is matched before it.
func uniqueLongestFirst(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		if s != "" && s != "/" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && len(out[j]) > len(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
