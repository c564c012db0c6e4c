package envpack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"time"
)

// checkTimeout bounds the interpreter start CheckRuntime makes (a cold start
// on a busy node with a slow shared filesystem can take seconds).
const checkTimeout = 30 * time.Second

// versionProbe prints the running interpreter's version. It imports the
// standard library, which a bare --version would not: a venv whose base
// installation is missing (or a --copies venv without its home) fails here.
const versionProbe = `import sys; print("%d.%d.%d" % sys.version_info[:3])`

// CheckRuntime verifies, on the node where envDir was unpacked, that the
// environment's interpreter starts. For a venv that means the base
// interpreter it links to exists at the same path and is the same Python
// major.minor (compiled extensions are built for one, e.g. cp311; patch
// releases share it). The error is a *RuntimeError whose message is one line
// meant to be shown as is.
func CheckRuntime(envDir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	return CheckRuntimeContext(ctx, envDir)
}

// CheckRuntimeContext is CheckRuntime with a caller's ctx.
func CheckRuntimeContext(ctx context.Context, envDir string) error {
	root, err := filepath.Abs(envDir)
	if err != nil {
		return &Error{Op: "check", Path: envDir, Err: err}
	}
	switch {
	case isFile(filepath.Join(root, "pyvenv.cfg")):
		return checkVenv(ctx, root)
	case isDir(filepath.Join(root, "conda-meta")):
		return checkConda(ctx, root)
	}
	return &RuntimeError{Msg: fmt.Sprintf("env: %s is not a Python environment: expected a venv (pyvenv.cfg) or a conda env (conda-meta/)", root), Err: ErrNotEnv}
}

func checkVenv(ctx context.Context, root string) error {
	cfg, err := readPyvenvCfg(filepath.Join(root, "pyvenv.cfg"))
	if err != nil {
		return &Error{Op: "check", Path: root, Err: err}
	}
	version := cfg["version"]
	if version == "" {
		version = cfg["version_info"]
	}
	base := baseInterpreter(root, []string{root}, cfg["executable"], cfg["home"])
	what := "base interpreter " + base
	if version != "" {
		what += " (Python " + version + ")"
	}
	advice := "a venv runs only where its base interpreter is installed at the same path: install it on every node, or pack a conda env"
	if _, err := os.Stat(base); base == "" || err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return closedTo(what, err)
		}
		return &RuntimeError{Msg: fmt.Sprintf("env: %s not found on this node; %s", what, advice), Err: err}
	}
	got, err := probe(ctx, filepath.Join(root, "bin", "python"))
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return closedTo(what, err)
		}
		return &RuntimeError{Msg: fmt.Sprintf("env: %s does not start on this node: %v; %s", what, err, advice), Err: err}
	}
	if version != "" && majorMinor(got) != majorMinor(version) {
		return &RuntimeError{Msg: fmt.Sprintf("env: base interpreter %s is Python %s on this node, but the venv was built with Python %s; %s",
			base, got, version, advice)}
	}
	return nil
}

// RunnerAndNode name, for a message about a program this process may not
// run, who it runs as ("user alice") and where (the host's name).
func RunnerAndNode() (who, where string) {
	who, where = "this user", "this node"
	if u, err := user.Current(); err == nil {
		who = "user " + u.Username
	}
	if h, err := os.Hostname(); err == nil {
		where = h
	}
	return who, where
}

// closedTo is the error of an interpreter this process's user may not run
// (it, or a directory on its path, is closed to them: a Python under
// /root, say), naming the user and the node.
func closedTo(what string, err error) error {
	who, where := RunnerAndNode()
	return &RuntimeError{Msg: fmt.Sprintf("env: %s cannot be run by %s on %s (permission denied: it or a directory on its path is closed to them); "+
		"make the environment from an interpreter every user can run, e.g. /usr/bin/python3 -m venv", what, who, where), Err: err}
}

func checkConda(ctx context.Context, root string) error {
	py := filepath.Join(root, "bin", "python")
	if _, err := os.Stat(py); err != nil {
		return &RuntimeError{Msg: fmt.Sprintf("env: conda env at %s has no bin/python (is python installed in it?)", root), Err: err}
	}
	if _, err := probe(ctx, py); err != nil {
		return &RuntimeError{Msg: fmt.Sprintf("env: %s does not start on this node: %v", py, err), Err: err}
	}
	return nil
}

// probe runs the interpreter isolated from the caller's PYTHON* variables
// and user site (-I) and returns the version it reports.
func probe(ctx context.Context, python string) (string, error) {
	cmd := exec.CommandContext(ctx, python, "-I", "-c", versionProbe)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := lastLine(stderr.String()); msg != "" {
			return "", errors.New(msg)
		}
		return "", err
	}
	return strings.TrimSpace(stdout.String()), nil
}

// lastLine is the most telling line of a Python failure (the exception or
// the "Fatal Python error" cause).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}
