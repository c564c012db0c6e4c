package pythonsdk

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFilesAreThePackagesSources(t *testing.T) {
	files := Files()
	names := map[string]bool{}
	for _, f := range files {
		names[f.Name] = true
		require.True(t, strings.HasPrefix(f.Name, "tfyarn/"), f.Name)
		require.NotContains(t, f.Name, "__pycache__")
		require.NotEqual(t, "tfyarn/_version.py", f.Name, "the version is written, not carried")
		src, err := os.ReadFile(filepath.FromSlash(f.Name))
		require.NoError(t, err)
		require.Equal(t, string(src), string(f.Data), f.Name)
	}
	require.True(t, names["tfyarn/__init__.py"], "embed keeps __init__.py (all:)")
}

func TestPEP440(t *testing.T) {
	for v, want := range map[string]string{
		"1.2.0": "1.2.0", "1.2.0-rc1": "1.2.0rc1", "1.2.0-alpha.2": "1.2.0a2", "2.0.0-beta3": "2.0.0b3", "v1.2.0": "1.2.0",
		"devel": "devel", "v0.0.0-20261129101010-abcdefabcdef": "v0.0.0-20261129101010-abcdefabcdef",
	} {
		require.Equal(t, want, PEP440(v), v)
	}
}

// TestExtractImports: the extracted package imports with the versions written, into a private
// directory, and a second extraction over the first (a launcher started again) works.
func TestExtractImports(t *testing.T) {
	python, err := exec.LookPath("python3")
	require.NoError(t, err, "python3 is needed for the SDK's tests")
	dir := filepath.Join(t.TempDir(), "sdk")
	require.NoError(t, Extract(dir, "1.2.0-rc1"))
	require.NoError(t, Extract(dir, "1.2.0-rc1"))
	st, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
	cmd := exec.Command(python, "-c", "import tfyarn, tfyarn._version as v; print(tfyarn.__version__, v.__binary_version__, tfyarn.__file__)")
	cmd.Dir = t.TempDir() // not python/, whose tfyarn/ the interpreter would find first
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "1.2.0rc1 1.2.0-rc1 "+filepath.Join(dir, "tfyarn", "__init__.py"), strings.TrimSpace(string(out)))
}
