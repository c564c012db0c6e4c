package client

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// tgz builds a .tar.gz of files (name → content).
func tgz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o755, Size: int64(len(files[n])), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(files[n]))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestCheckEnvArchive(t *testing.T) {
	good := tgz(t, map[string]string{"./bin/python": "#!", "lib/python3.11/os.py": "x = 1\n"})
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
		want string // "" for accepted
	}{
		{"ok.tar.gz", good, ""},
		{"py3.tgz", tgz(t, map[string]string{"bin/python3": "#!"}), ""},
		{"corrupt.tar.gz", []byte("this is not gzip at all"), "is not a gzip-compressed tar archive (gzip: not in gzip format)"},
		{"truncated.tar.gz", good[:len(good)/2], "cannot be unpacked (truncated"},
		{"nopython.tar.gz", tgz(t, map[string]string{"data/x.csv": "1"}), "holds no Python environment (no bin/python or bin/python3 at its root)"},
		{"nested.tar.gz", tgz(t, map[string]string{"venv/bin/python": "#!"}), "holds no Python environment"},
		{"empty.tar.gz", nil, "is not a gzip-compressed tar archive"},
	} {
		p := filepath.Join(dir, tc.name)
		require.NoError(t, os.WriteFile(p, tc.data, 0o644))
		err := checkEnvArchive(p)
		if tc.want == "" {
			require.NoError(t, err, tc.name)
			continue
		}
		require.ErrorContains(t, err, tc.want, tc.name)
		require.ErrorContains(t, err, "env "+p, tc.name)
	}
}
