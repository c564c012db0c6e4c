package shipplan

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
		_, err := checkEnvArchive(p)
		if tc.want == "" {
			require.NoError(t, err, tc.name)
			continue
		}
		require.ErrorContains(t, err, tc.want, tc.name)
		require.ErrorContains(t, err, "env "+p, tc.name)
	}
}

// A conda env whose manifest lists prefix text files is rewritten by the
// launcher on the node: it must reach the task as the user's own
// (PRIVATE) copy; a venv, or a conda env with nothing to rewrite, stays
// shareable.
func TestEnvArchiveRelocationNeedsOwnCopy(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		manifest string
		want     bool
	}{
		"conda.tar.gz":       {`{"kind":"conda","prefixes":["/opt/env"],"prefix_text_files":["lib/pkgconfig/x.pc"]}`, true},
		"conda-clean.tar.gz": {`{"kind":"conda","prefixes":["/opt/env"]}`, false},
		"venv.tar.gz":        {`{"kind":"venv","prefixes":["/opt/venv"],"prefix_text_files":["bin/activate"]}`, false},
		"nomanifest.tar.gz":  {"", false},
	} {
		files := map[string]string{"bin/python": "#!"}
		if tc.manifest != "" {
			files["./.envpack.json"] = tc.manifest
		}
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, tgz(t, files), 0o644))
		got, err := checkEnvArchive(p)
		require.NoError(t, err, name)
		require.Equal(t, tc.want, got, name)
		item, err := envItem(p)
		require.NoError(t, err, name)
		require.Equal(t, tc.want, item.OwnCopy, name)
	}
}
