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

// tarEntry is one entry of a crafted archive.
type tarEntry struct {
	name, link, body string
	kind             byte
}

func writeTar(t *testing.T, dir, name string, entries ...tarEntry) string {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.kind, Mode: 0o644, Size: int64(len(e.body))}
		if e.kind != tar.TypeReg {
			h.Size = 0
		}
		require.NoError(t, tw.WriteHeader(h))
		if e.kind == tar.TypeReg {
			_, err := tw.Write([]byte(e.body))
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
	return p
}

func file(name, body string) tarEntry { return tarEntry{name: name, body: body, kind: tar.TypeReg} }
func symlink(name, to string) tarEntry {
	return tarEntry{name: name, link: to, kind: tar.TypeSymlink}
}

// TestAttackUnpackLeavesNoDirectory: an archive someone hands you cannot
// make Unpack write outside its directory, nor leave links there that
// lead outside; each refusal names the entry.
func TestAttackUnpackLeavesNoDirectory(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		entries []tarEntry
		refusal string
	}{
		{"dot-dot path", []tarEntry{file("a/../../escape", "x")}, `entry "a/../../escape" leaves`},
		{"absolute path", []tarEntry{file("/tmp/escape", "x")}, `entry "/tmp/escape": an absolute path`},
		{"symlink to / then a file under it", []tarEntry{symlink("root", "/"), file("root/escape", "x")}, `entry "root": a symbolic link to "/"`},
		{"relative symlink out then a file under it", []tarEntry{symlink("up", ".."), file("up/escape", "x")}, `entry "up": a symbolic link to ".."`},
		{"a file through an inner symlink", []tarEntry{file("d/keep", "k"), symlink("l", "d"), file("l/escape", "x")}, `entry "l/escape" would be written through the symbolic link "l"`},
		{"a chain that climbs after a link", []tarEntry{
			file("b/c/keep", "k"), symlink("b/c/d", ".."), symlink("a", "b/c/d/../../../escape"),
		}, `entry "a": a symbolic link to "b/c/d/../../../escape", which may leave`},
		{"hard link outside", []tarEntry{{name: "h", link: "../outside", kind: tar.TypeLink}}, `entry "h": a hard link to "../outside"`},
		{"hard link to an absolute path", []tarEntry{{name: "h", link: "/etc/passwd", kind: tar.TypeLink}}, `entry "h": a hard link to "/etc/passwd"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(top, "outside"), []byte("secret"), 0o600))
			archive := writeTar(t, top, "evil.tar", tc.entries...)
			dest := filepath.Join(top, "a", "out")
			err := Unpack(ctx, archive, dest)
			require.ErrorContains(t, err, tc.refusal)
			require.ErrorContains(t, err, "refused")
			require.NotContains(t, err.Error(), "\n")
			require.NoFileExists(t, filepath.Join(top, "escape"))
			require.NoFileExists(t, filepath.Join(top, "a", "escape"))
			require.NoFileExists(t, "/tmp/escape")
		})
	}
}

// A link already in the destination is not written through either.
func TestAttackUnpackThroughAnExistingLink(t *testing.T) {
	top := t.TempDir()
	dest := filepath.Join(top, "out")
	require.NoError(t, os.MkdirAll(dest, 0o755))
	require.NoError(t, os.Symlink(top, filepath.Join(dest, "pre")))
	archive := writeTar(t, top, "evil.tar", file("pre/escape", "x"))
	require.ErrorContains(t, Unpack(context.Background(), archive, dest), `entry "pre/escape" would be written through the symbolic link "pre"`)
	require.NoFileExists(t, filepath.Join(top, "escape"))

	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for _, name := range []string{"pre/escape", "../escape", "/escape"} {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte("x"))
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		require.NoError(t, os.WriteFile(filepath.Join(top, "evil.zip"), zbuf.Bytes(), 0o644))
		err = Unpack(context.Background(), filepath.Join(top, "evil.zip"), dest)
		require.ErrorContains(t, err, "refused", "zip entry %q", name)
		require.NoFileExists(t, filepath.Join(top, "escape"))
		zbuf.Reset()
		zw = zip.NewWriter(&zbuf)
	}
}

// What stays inside unpacks: links within the archive, climbing no
// higher than their directory, and hard links to its entries.
func TestUnpackLinksInside(t *testing.T) {
	top := t.TempDir()
	archive := writeTar(t, top, "ok.tar",
		file("lib/libx.so.1", "elf"), symlink("lib64", "lib"), symlink("lib/libx.so", "libx.so.1"),
		symlink("bin/lib", "../lib"), tarEntry{name: "lib/hard", link: "lib/libx.so.1", kind: tar.TypeLink})
	dest := filepath.Join(top, "out")
	require.NoError(t, Unpack(context.Background(), archive, dest))
	for _, p := range []string{"lib64/libx.so", "bin/lib/libx.so.1", "lib/hard"} {
		b, err := os.ReadFile(filepath.Join(dest, p))
		require.NoError(t, err, p)
		require.Equal(t, "elf", string(b), p)
	}
}
