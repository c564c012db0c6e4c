package envpack

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUnpack(t *testing.T) {
	dir := t.TempDir()
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, err := zw.Create("words/list.txt")
	require.NoError(t, err)
	_, err = w.Write([]byte("hello\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "v.ZIP"), zbuf.Bytes(), 0o644))

	tarGz := func(name, content string) []byte {
		var buf bytes.Buffer
		gw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gw)
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(content)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(content))
		require.NoError(t, err)
		require.NoError(t, tw.Close())
		require.NoError(t, gw.Close())
		return buf.Bytes()
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "m.tgz"), tarGz("bin/run", "#!/bin/sh\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "evil.tar.gz"), tarGz("../escape", "x"), 0o644))

	ctx := context.Background()
	require.NoError(t, Unpack(ctx, filepath.Join(dir, "v.ZIP"), filepath.Join(dir, "out/v")))
	b, err := os.ReadFile(filepath.Join(dir, "out/v/words/list.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello\n", string(b))

	require.NoError(t, Unpack(ctx, filepath.Join(dir, "m.tgz"), filepath.Join(dir, "out/m")))
	st, err := os.Stat(filepath.Join(dir, "out/m/bin/run"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o755), st.Mode().Perm(), "the mode survives")

	err = Unpack(ctx, filepath.Join(dir, "evil.tar.gz"), filepath.Join(dir, "out/evil"))
	require.ErrorContains(t, err, "leaves the archive's directory")
	require.NoFileExists(t, filepath.Join(dir, "out/escape"))
}
