package envpack

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	venvOnce sync.Once
	venvDir  string
	venvErr  error
)

// sharedVenv is one real venv (with pip) for the tests that only read it:
// creating one takes seconds. It lives in its own temp dir, removed by TestMain.
func sharedVenv(t *testing.T) string {
	t.Helper()
	venvOnce.Do(func() {
		var base string
		base, venvErr = os.MkdirTemp("", "envpack-venv-")
		if venvErr != nil {
			return
		}
		venvDir = filepath.Join(base, "venv")
		out, err := exec.Command("python3", "-m", "venv", venvDir).CombinedOutput()
		if err != nil {
			venvErr = &exec.Error{Name: "python3 -m venv: " + string(out), Err: err}
		}
	})
	require.NoError(t, venvErr)
	return venvDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if venvDir != "" {
		os.RemoveAll(filepath.Dir(venvDir))
	}
	os.Exit(code)
}

func pack(t *testing.T, dir string, opts Options) ([]byte, Manifest) {
	t.Helper()
	var buf bytes.Buffer
	m, err := Pack(context.Background(), dir, &buf, opts)
	require.NoError(t, err)
	return buf.Bytes(), m
}

// unpack extracts the way Hadoop's FileUtil.unTar does on Linux
// (gzip -dc | tar -xf -) into a fresh directory.
func unpack(t *testing.T, archive []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "env")
	require.NoError(t, os.Mkdir(dir, 0o755))
	cmd := exec.Command("sh", "-c", "gzip -dc | tar -xf -")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(archive)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return dir
}

// entries lists the archive's headers in order.
func entries(t *testing.T, archive []byte) []*tar.Header {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	var hs []*tar.Header
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return hs
		}
		require.NoError(t, err)
		hs = append(hs, h)
	}
}

func writeFile(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), mode))
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %v: %s", name, args, out)
	return string(out)
}
