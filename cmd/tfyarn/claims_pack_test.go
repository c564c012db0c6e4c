package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClaimsPackListsPrefixBinaries: README "only binaries with the build
// path compiled in (listed by `tfyarn pack`) need that path to exist".
func TestClaimsPackListsPrefixBinaries(t *testing.T) {
	root := filepath.Join(t.TempDir(), "conda-env")
	py, err := exec.LookPath("python3")
	require.NoError(t, err)
	py, err = filepath.EvalSymlinks(py)
	require.NoError(t, err)
	for name, body := range map[string]string{
		"conda-meta/python-3.11.7-h955ad1f_0.json": "{}\n",
		"lib/libx.so": "\x7fELF\x00\x00" + root + "/lib\x00",
	} {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o755))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	require.NoError(t, os.Symlink(py, filepath.Join(root, "bin", "python")))

	stdout, stderr, code := runEnvCLI(t, "pack", root, "-o", filepath.Join(t.TempDir(), "env.tar.gz"))
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `Binaries with prefix\s*: 1, not rewritten: they work only where `+regexp.QuoteMeta(root)+` exists \(e\.g\. lib/libx\.so\)`, stdout)

	// The whole list: --output json.
	stdout, stderr, code = runEnvCLI(t, "pack", "--output", "json", root, "-o", filepath.Join(t.TempDir(), "env.tar.gz"))
	require.Equal(t, exitOK, code, stderr)
	var m struct {
		PrefixBinaryFiles []string `json:"prefix_binary_files"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &m))
	require.Equal(t, []string{"lib/libx.so"}, m.PrefixBinaryFiles)
}
