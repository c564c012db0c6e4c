package envpack

import (
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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

// A venv whose base interpreter is in a directory closed to the user who
// checks it (a Python under /root, a task running as alice): the error
// says so, naming the interpreter, the user and the node, not "not
// found". Root passes every permission check, so as root the check runs
// in this test binary started again as nobody.
func TestCheckRuntimeBaseClosedToTheUser(t *testing.T) {
	if dir := os.Getenv("ENVPACK_TEST_CHECK_RUNTIME"); dir != "" {
		if err := CheckRuntime(dir); err != nil {
			os.Stdout.WriteString(err.Error())
		}
		return
	}
	dir, err := os.MkdirTemp("", "envpack-closed-")
	require.NoError(t, err)
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "closed"), 0o700); os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	closed := filepath.Join(dir, "closed")
	require.NoError(t, os.Mkdir(closed, 0o700))
	base := filepath.Join(closed, "python3")
	require.NoError(t, os.Symlink(lookPython(t), base))
	root := filepath.Join(dir, "venv")
	writeFile(t, filepath.Join(root, "pyvenv.cfg"), "home = "+closed+"\nversion = 3.11.7\n", 0o644)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	require.NoError(t, os.Symlink(base, filepath.Join(root, "bin", "python")))
	require.NoError(t, os.Chmod(filepath.Join(root, "pyvenv.cfg"), 0o644))

	// The test binary, where any user may run it (go test builds it in a
	// directory of its own, 0700).
	self, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	bin := filepath.Join(dir, "envpack.test")
	require.NoError(t, os.WriteFile(bin, self, 0o755))
	cmd := exec.Command(bin, "-test.run=^TestCheckRuntimeBaseClosedToTheUser$")
	cmd.Env = append(os.Environ(), "ENVPACK_TEST_CHECK_RUNTIME="+root)
	cmd.Dir = dir
	who := ""
	if os.Geteuid() == 0 {
		nobody, err := user.Lookup("nobody")
		require.NoError(t, err, "root runs the check as nobody")
		uid, _ := strconv.Atoi(nobody.Uid)
		gid, _ := strconv.Atoi(nobody.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		who = "nobody"
	} else {
		require.NoError(t, os.Chmod(closed, 0))
		me, err := user.Current()
		require.NoError(t, err)
		who = me.Username
	}
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	host, err := os.Hostname()
	require.NoError(t, err)
	require.Equal(t, "env: base interpreter "+base+" (Python 3.11.7) cannot be run by user "+who+" on "+host+
		" (permission denied: it or a directory on its path is closed to them); make the environment from an interpreter every user can run, e.g. /usr/bin/python3 -m venv",
		strings.TrimSuffix(string(out), "PASS\n"))
}
