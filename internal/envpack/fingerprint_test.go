package envpack

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/procio"
)

// printVenv is a small venv-shaped directory (no interpreter needed to
// fingerprint or pack it).
func printVenv(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "venv")
	writeFile(t, filepath.Join(dir, "pyvenv.cfg"), "home = /usr/bin\nversion = 3.11.2\n", 0o644)
	writeFile(t, filepath.Join(dir, "lib", "python3.11", "site-packages", "m.py"), "X = 1\n", 0o644)
	writeFile(t, filepath.Join(dir, "lib", "python3.11", "site-packages", "pkg", "__init__.py"), "", 0o644)
	writeFile(t, filepath.Join(dir, "bin", "tool"), "#!/bin/sh\necho hi\n", 0o755)
	require.NoError(t, os.Symlink("/usr/bin/python3", filepath.Join(dir, "bin", "python")))
	return dir
}

func printOf(t *testing.T, dir string, target Target) Print {
	t.Helper()
	p, err := Fingerprint(context.Background(), dir, target, Options{})
	require.NoError(t, err)
	return p
}

// Every change Pack would see gives a new print, including an edit that
// keeps the size and puts the mtime back (the ctime still moves); what Pack
// skips (bytecode) does not.
func TestFingerprintSeesEveryChange(t *testing.T) {
	m := filepath.Join("lib", "python3.11", "site-packages", "m.py")
	cases := []struct {
		name    string
		change  func(t *testing.T, dir string)
		changed bool
	}{
		{"nothing", func(*testing.T, string) {}, false},
		{"content and mtime", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, m), "X = 2\n", 0o644)
		}, true},
		{"same size, mtime put back", func(t *testing.T, dir string) {
			p := filepath.Join(dir, m)
			st, err := os.Stat(p)
			require.NoError(t, err)
			writeFile(t, p, "X = 3\n", 0o644)
			require.NoError(t, os.Chtimes(p, st.ModTime(), st.ModTime()))
			st2, err := os.Stat(p)
			require.NoError(t, err)
			require.Equal(t, st.ModTime(), st2.ModTime())
			require.Equal(t, st.Size(), st2.Size())
		}, true},
		{"mode", func(t *testing.T, dir string) {
			require.NoError(t, os.Chmod(filepath.Join(dir, m), 0o755))
		}, true},
		{"new file", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "lib", "new.txt"), "", 0o644)
		}, true},
		{"removed file", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, m)))
		}, true},
		{"symlink target", func(t *testing.T, dir string) {
			link := filepath.Join(dir, "bin", "python")
			require.NoError(t, os.Remove(link))
			require.NoError(t, os.Symlink("/usr/bin/python3.11", link))
		}, true},
		{"empty directory", func(t *testing.T, dir string) {
			require.NoError(t, os.Mkdir(filepath.Join(dir, "share"), 0o755))
		}, true},
		{"bytecode written by Python", func(t *testing.T, dir string) {
			sp := filepath.Join(dir, "lib", "python3.11", "site-packages")
			writeFile(t, filepath.Join(sp, "__pycache__", "m.cpython-311.pyc"), "bytecode", 0o644)
			writeFile(t, filepath.Join(sp, "old.pyc"), "bytecode", 0o644)
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := printVenv(t)
			before := printOf(t, dir, TargetEnv)
			tc.change(t, dir)
			after := printOf(t, dir, TargetEnv)
			if tc.changed {
				require.NotEqual(t, before.Sum, after.Sum)
			} else {
				require.Equal(t, before, after)
			}
		})
	}
}

// A moved directory is a different input (its paths are in the shebangs
// Pack rewrites), and the same directory is a different input for PackDir.
func TestFingerprintPathAndTarget(t *testing.T) {
	dir := printVenv(t)
	before := printOf(t, dir, TargetEnv)
	require.NotEqual(t, before.Sum, printOf(t, dir, TargetDir).Sum)
	lvl, err := Fingerprint(context.Background(), dir, TargetEnv, Options{Level: 6})
	require.NoError(t, err)
	require.NotEqual(t, before.Sum, lvl.Sum)
	moved := filepath.Join(filepath.Dir(dir), "moved")
	require.NoError(t, os.Rename(dir, moved))
	require.NotEqual(t, before.Sum, printOf(t, moved, TargetEnv).Sum)
	require.Equal(t, 10, before.Entries) // pyvenv.cfg, lib/, python3.11/, site-packages/, m.py, pkg/, __init__.py, bin/, tool, python
}

// Fingerprinting reads no file's content: the bytes the process reads
// while fingerprinting a directory that holds 32 MiB are the listings'
// only, while packing it reads them all (the instrument works).
func TestFingerprintReadsNoContent(t *testing.T) {
	dir := printVenv(t)
	big := make([]byte, 32<<20)
	_, err := rand.Read(big)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lib", "big.bin"), big, 0o644))

	before := procio.Rchar(t)
	printOf(t, dir, TargetEnv)
	printOf(t, dir, TargetDir)
	_, err = FilePrint(filepath.Join(dir, "lib", "big.bin"))
	require.NoError(t, err)
	require.Less(t, procio.Rchar(t)-before, int64(64<<10))

	before = procio.Rchar(t)
	pack(t, dir, Options{Level: 1})
	require.GreaterOrEqual(t, procio.Rchar(t)-before, int64(32<<20))
}

// FilePrint follows a symlink: a changed target is a changed file.
func TestFilePrint(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "a.py"), filepath.Join(dir, "link.py")
	writeFile(t, target, "A = 1\n", 0o644)
	require.NoError(t, os.Symlink(target, link))
	p1, err := FilePrint(link)
	require.NoError(t, err)
	writeFile(t, target, "A = 2\n", 0o644)
	p2, err := FilePrint(link)
	require.NoError(t, err)
	require.NotEqual(t, p1.Sum, p2.Sum)
	_, err = FilePrint(filepath.Join(dir, "missing"))
	require.ErrorContains(t, err, "envpack: fingerprint")
}

func TestPrintSettled(t *testing.T) {
	now := time.Now()
	require.True(t, Print{Newest: now.Add(-2 * time.Second)}.Settled(now))
	require.False(t, Print{Newest: now.Add(-time.Second)}.Settled(now))
	require.False(t, Print{Newest: now}.Settled(now))
}

func TestPackCache(t *testing.T) {
	c := &PackCache{Dir: filepath.Join(t.TempDir(), "packs")}
	dir := printVenv(t)
	p := printOf(t, dir, TargetEnv)
	_, ok := c.Lookup(dir, TargetEnv, p)
	require.False(t, ok, "empty cache")

	e := Packed{Print: p.Sum, SHA256: strings.Repeat("ab", 32), ArchiveBytes: 123, Manifest: &Manifest{Kind: KindVenv}}
	require.NoError(t, c.Store(dir, TargetEnv, e))
	got, ok := c.Lookup(dir, TargetEnv, p)
	require.True(t, ok)
	require.Equal(t, e, got)
	_, ok = c.Lookup(dir, TargetDir, p)
	require.False(t, ok, "another target")

	writeFile(t, filepath.Join(dir, "lib", "new.txt"), "", 0o644)
	_, ok = c.Lookup(dir, TargetEnv, printOf(t, dir, TargetEnv))
	require.False(t, ok, "changed directory")

	f, err := c.entryPath(dir, TargetEnv)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(f, []byte("{not json"), 0o600))
	_, ok = c.Lookup(dir, TargetEnv, p)
	require.False(t, ok, "corrupt entry")

	require.Error(t, c.Store(dir, TargetEnv, Packed{Print: p.Sum, SHA256: "short"}))
	ents, err := os.ReadDir(c.Dir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "one entry per directory, no leftovers")
}

// The parallel walk gives the same print as many times as it is taken.
func TestFingerprintStable(t *testing.T) {
	dir := printVenv(t)
	for i := 0; i < 40; i++ {
		writeFile(t, filepath.Join(dir, "lib", "d"+strconv.Itoa(i%7), "f"+strconv.Itoa(i)), strings.Repeat("x", i), 0o644)
	}
	first := printOf(t, dir, TargetEnv)
	for i := 0; i < 20; i++ {
		require.Equal(t, first, printOf(t, dir, TargetEnv))
	}
	var buf bytes.Buffer
	_, err := Pack(context.Background(), dir, &buf, Options{})
	require.NoError(t, err)
	require.Equal(t, first, printOf(t, dir, TargetEnv), "packing changes nothing")
}
