package shipplan

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// zipOf builds a .zip of files (name → content), stored uncompressed so a
// test can find and spoil an entry's bytes.
func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store})
		require.NoError(t, err)
		_, err = w.Write([]byte(files[n]))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// tarOf builds an uncompressed .tar: the inside of tgz.
func tarOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zr, err := gzip.NewReader(bytes.NewReader(tgz(t, files)))
	require.NoError(t, err)
	_, err = buf.ReadFrom(zr)
	require.NoError(t, err)
	return buf.Bytes()
}

// Issue 21.6: --archives files are read through as the NodeManager will
// unpack them (by suffix) before anything is uploaded.
func TestCheckArchive(t *testing.T) {
	files := map[string]string{"words/en.txt": "hello world", "m/w.bin": "weights"}
	goodZip, goodTgz, goodTar := zipOf(t, files), tgz(t, files), tarOf(t, files)
	corruptZip := append([]byte(nil), goodZip...)
	corruptZip[bytes.Index(corruptZip, []byte("hello"))] ^= 0xff // its data no longer matches its CRC
	emptyTar := func() []byte {
		var buf bytes.Buffer
		require.NoError(t, tar.NewWriter(&buf).Close())
		return buf.Bytes()
	}()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
		want string // "" for accepted
	}{
		{"ok.zip", goodZip, ""},
		{"ok.JAR", goodZip, ""},
		{"ok.tgz", goodTgz, ""},
		{"ok.tar.gz", goodTgz, ""},
		{"ok.tar", goodTar, ""},
		{"notarchive.zip", []byte("just text\n"), "is not a readable zip archive (zip: not a valid zip file); fix it, or ship the file as it is with --files"},
		{"crc.zip", corruptZip, "is not a readable zip archive (zip: checksum error at words/en.txt)"},
		{"truncated.zip", goodZip[:len(goodZip)-10], "is not a readable zip archive"},
		{"tgz-as.zip", goodTgz, "is not a readable zip archive"},
		{"zip-as.tar.gz", goodZip, "is not a readable gzip-compressed tar archive (gzip: not in gzip format)"},
		{"truncated.tgz", goodTgz[:len(goodTgz)/2], "is not a readable gzip-compressed tar archive (truncated)"},
		{"text.tar", []byte("just text, not a tar header at all, padded............"), "is not a readable tar archive"},
		{"empty.tar", emptyTar, "is not a readable tar archive (no entries)"},
		{"empty.zip", nil, "is not a readable zip archive"},
	} {
		p := filepath.Join(dir, tc.name)
		require.NoError(t, os.WriteFile(p, tc.data, 0o644))
		err := checkArchive(p)
		if tc.want == "" {
			require.NoError(t, err, tc.name)
			continue
		}
		require.ErrorContains(t, err, "archive "+p+" ", tc.name)
		require.ErrorContains(t, err, tc.want, tc.name)
	}
}
