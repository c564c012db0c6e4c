package envpack

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func lookPython(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	require.NoError(t, err)
	// pyenv's shim is a shell script: ask Python where it really is.
	out, err := exec.Command(py, "-c", "import sys; print(sys.executable)").Output()
	require.NoError(t, err)
	return string(out[:len(out)-1])
}

// fakeVenv is a venv skeleton whose bin/python3 links to base.
func fakeVenv(t *testing.T, base, version string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "venv")
	writeFile(t, filepath.Join(root, "pyvenv.cfg"),
		"home = "+filepath.Dir(base)+"\ninclude-system-site-packages = false\nversion = "+version+"\nexecutable = "+base+"\n", 0o644)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	require.NoError(t, os.Symlink(base, filepath.Join(root, "bin", "python3")))
	require.NoError(t, os.Symlink("python3", filepath.Join(root, "bin", "python")))
	return root
}

func TestCheckRuntimeMissingBase(t *testing.T) {
	root := fakeVenv(t, "/nonexistent/bin/python3.11", "3.11.7")
	err := CheckRuntime(root)
	require.EqualError(t, err, "env: base interpreter /nonexistent/bin/python3.11 (Python 3.11.7) not found on this node; "+
		"a venv runs only where its base interpreter is installed at the same path: install it on every node, or pack a conda env")
	var re *RuntimeError
	require.True(t, errors.As(err, &re))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestCheckRuntimeVersionMismatch(t *testing.T) {
	py := lookPython(t)
	root := fakeVenv(t, py, "2.7.18")
	err := CheckRuntime(root)
	require.Error(t, err)
	require.Regexp(t, `^env: base interpreter `+py+` is Python 3\.\d+\.\d+ on this node, but the venv was built with Python 2\.7\.18; `, err.Error())
}

func TestCheckRuntimeNotAnEnv(t *testing.T) {
	dir := t.TempDir()
	err := CheckRuntime(dir)
	require.EqualError(t, err, "env: "+dir+" is not a Python environment: expected a venv (pyvenv.cfg) or a conda env (conda-meta/)")
}

func TestCheckRuntimeCondaWithoutPython(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "conda-meta", "history"), "", 0o644)
	require.EqualError(t, CheckRuntime(dir), "env: conda env at "+dir+" has no bin/python (is python installed in it?)")
}
