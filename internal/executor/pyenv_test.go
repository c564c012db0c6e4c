package executor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/taskspec"
)

func TestPythonEnvironVenv(t *testing.T) {
	env := PythonEnviron([]string{"PATH=/usr/bin:/bin", "PYTHONHOME=/opt/py", "PYTHONPATH=/old", "HOME=/h"},
		"/c/env", []string{"/c/src", "/c/lib"})
	get := func(k string) string { v, _ := lookupEnv(env, k); return v }
	require.Equal(t, "/c/env/bin:/usr/bin:/bin", get("PATH"))
	require.Equal(t, "/c/env", get("VIRTUAL_ENV"))
	require.Equal(t, "/c/src:/c/lib:/old", get("PYTHONPATH"))
	_, ok := lookupEnv(env, "PYTHONHOME")
	require.False(t, ok, "PYTHONHOME would send the env's python elsewhere")
	require.Equal(t, "/h", get("HOME"))
	require.Equal(t, 1, strings.Count(strings.Join(env, "\n"), "PATH=/c/env"))
}

func TestPythonEnvironCondaAndNoPath(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "conda-meta"), 0o755))
	env := PythonEnviron([]string{"HOME=/h"}, dir, nil)
	get := func(k string) string { v, _ := lookupEnv(env, k); return v }
	require.Equal(t, filepath.Join(dir, "bin"), get("PATH"), "no PATH before: the env's bin alone")
	require.Equal(t, dir, get("CONDA_PREFIX"))
	_, ok := lookupEnv(env, "VIRTUAL_ENV")
	require.False(t, ok)
	_, ok = lookupEnv(env, "PYTHONPATH")
	require.False(t, ok)

	// Only source directories.
	env = PythonEnviron([]string{"PATH=/bin"}, "", []string{"/c/src"})
	require.Equal(t, []string{"PATH=/bin", "PYTHONPATH=/c/src"}, env)
}

func TestPythonPathList(t *testing.T) {
	require.Nil(t, PythonPathList(""))
	require.Equal(t, []string{"src", "lib"}, PythonPathList("src::lib:"))
}

func TestLookPathInUsesTheProgramsPath(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "tfyarn-probe-prog")
	require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\necho from-env\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notexec"), nil, 0o644))
	p, ok := lookPathIn("tfyarn-probe-prog", []string{"PATH=relative:" + dir})
	require.True(t, ok)
	require.Equal(t, prog, p)
	_, ok = lookPathIn("notexec", []string{"PATH=" + dir})
	require.False(t, ok)
	_, ok = lookPathIn("./tfyarn-probe-prog", []string{"PATH=" + dir})
	require.False(t, ok, "paths are not looked up")
	_, ok = lookPathIn("tfyarn-probe-prog", nil)
	require.False(t, ok)
}

// fakeVenvIn makes dir/name a venv skeleton whose python links to base.
func fakeVenvIn(t *testing.T, dir, name, base string) {
	t.Helper()
	root := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "pyvenv.cfg"),
		[]byte("home = "+filepath.Dir(base)+"\nversion = 3.11.7\nexecutable = "+base+"\n"), 0o644))
	require.NoError(t, os.Symlink(base, filepath.Join(root, "bin", "python3")))
	require.NoError(t, os.Symlink("python3", filepath.Join(root, "bin", "python")))
}

// A venv whose base interpreter is not on the node: the program never
// starts, and the AM gets the one-line reason as the stderr tail.
func TestMissingBaseInterpreterFailsBeforeTheProgram(t *testing.T) {
	dir := t.TempDir()
	fakeVenvIn(t, dir, "env", "/nonexistent/bin/python3.11")
	marker := filepath.Join(dir, "ran")
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", "touch "+marker)
	l.cfg.Dir, l.cfg.PythonEnv = dir, "env"
	o := l.run(t)
	require.Equal(t, ExitLauncherFailed, o.code)
	want := "env: base interpreter /nonexistent/bin/python3.11 (Python 3.11.7) not found on this node; " +
		"a venv runs only where its base interpreter is installed at the same path: install it on every node, or pack a conda env"
	require.EqualError(t, o.err, want)
	require.NoFileExists(t, marker)
	require.Contains(t, l.stderr.String(), want)
	e, ok := a.board.Exit(id(taskspec.Worker, 0))
	require.True(t, ok)
	require.Equal(t, ExitLauncherFailed, e.ExitCode)
	require.Equal(t, []string{want}, e.StderrTail)
	require.Empty(t, a.board.Registrations(), "it failed before registering")
}

func TestMissingEnvDirFails(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), "true")
	l.cfg.Dir, l.cfg.PythonEnv = t.TempDir(), "env"
	o := l.run(t)
	require.Equal(t, ExitLauncherFailed, o.code)
	require.EqualError(t, o.err, "env: the job's Python environment env is not in the container (was it localized?)")
}

// A working venv: `python` is the env's, found through the program's PATH,
// and the source directory is importable.
func TestProgramRunsInTheEnv(t *testing.T) {
	base := realPython(t)
	dir := t.TempDir()
	fakeVenvIn(t, dir, "env", base)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "tfyarn_srcprobe.py"), []byte("V = 7\n"), 0o644))
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), "python", "-c",
		"import sys, os, tfyarn_srcprobe; print(sys.prefix); print(os.environ['VIRTUAL_ENV']); print(tfyarn_srcprobe.V)")
	l.cfg.Dir, l.cfg.PythonEnv, l.cfg.PythonPath = dir, "env", []string{"src"}
	l.cfg.Env = []string{"PATH=/usr/bin:/bin"} // no python of the env here: it must come from env/bin
	o := l.run(t)
	require.NoError(t, o.err, l.stderr.String())
	require.Equal(t, 0, o.code, l.stderr.String())
	envDir := filepath.Join(dir, "env")
	require.Equal(t, envDir+"\n"+envDir+"\n7\n", l.stdout.String())
}

func realPython(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	require.NoError(t, err)
	// pyenv's shim is a shell script: ask Python where it really is.
	out, err := exec.Command(py, "-c", "import sys; print(sys.executable)").Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// TestProgramImportsTfyarn: with no Python environment at all, the program imports tfyarn's
// package, written by the launcher into a private directory of its working directory, right after
// the job's source directory on PYTHONPATH.
func TestProgramImportsTfyarn(t *testing.T) {
	python, err := exec.LookPath("python3")
	require.NoError(t, err)
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), python, "-c", "import os, tfyarn; print(tfyarn.__file__); print(os.environ['PYTHONPATH'])")
	l.cfg.PythonSDK, l.cfg.Dir = "", t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(l.cfg.Dir, "src"), 0o755))
	l.cfg.PythonPath = []string{"src"}
	l.cfg.Env = append(os.Environ(), "PYTHONPATH=/old", "PYTHONDONTWRITEBYTECODE=1")
	o := l.run(t)
	require.NoError(t, o.err)
	require.Equal(t, 0, o.code, l.stderr.String())
	sdk := filepath.Join(l.cfg.Dir, sdkDirName)
	require.Equal(t, filepath.Join(sdk, "tfyarn", "__init__.py")+"\n"+
		strings.Join([]string{filepath.Join(l.cfg.Dir, "src"), sdk, "/old"}, ":")+"\n", l.stdout.String())
	st, err := os.Stat(sdk)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm(), "private")
	need := strings.Join(strings.Fields(clustertest.DocSection(t, "## What the tasks need")), " ")
	require.Contains(t, need, "the binary also puts the package on every task's `PYTHONPATH`")
}
