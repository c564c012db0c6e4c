package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "entry.json")
	require.NoError(t, Write(p, []byte("old"), 0o600))
	require.NoError(t, Write(p, []byte("new content"), 0o600))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "new content", string(b))
	st, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, left, 1, "no temporary file left")

	require.Error(t, Write(filepath.Join(dir, "missing", "x"), []byte("x"), 0o600))
	b, err = os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, "new content", string(b))
}
