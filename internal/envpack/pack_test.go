package envpack

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPackVenvDeterministic(t *testing.T) {
	venv := sharedVenv(t)
	a, ma := pack(t, venv, Options{})
	b, mb := pack(t, venv, Options{})
	require.True(t, bytes.Equal(a, b), "two packs of the same venv differ")
	require.Equal(t, ma, mb)
	require.Equal(t, int64(len(a)), ma.ArchiveBytes)
	require.Len(t, ma.SHA256, 64)

	s1, _ := pack(t, venv, Options{Serial: true})
	s2, _ := pack(t, venv, Options{Serial: true})
	require.True(t, bytes.Equal(s1, s2), "two serial packs differ")

	// gzip header: no name, no mtime (bytes 4..7), FLG 0.
	require.Equal(t, byte(0), a[3])
	require.Equal(t, []byte{0, 0, 0, 0}, a[4:8])

	for _, h := range entries(t, a) {
		require.Equal(t, ArchiveTime, h.ModTime.UTC(), h.Name)
		require.Zero(t, h.Uid, h.Name)
		require.Zero(t, h.Gid, h.Name)
		require.Empty(t, h.Uname, h.Name)
		require.Empty(t, h.Gname, h.Name)
		require.NotContains(t, h.Name, "__pycache__")
		require.False(t, strings.HasSuffix(h.Name, ".pyc"), h.Name)
		require.Contains(t, []int64{0o755, 0o644, 0o777}, h.Mode, h.Name)
	}
}

func TestPackVenvManifest(t *testing.T) {
	venv := sharedVenv(t)
	_, m := pack(t, venv, Options{})
	require.Equal(t, KindVenv, m.Kind)
	require.Contains(t, m.Prefixes, venv)
	require.Regexp(t, `^3\.\d+\.\d+$`, m.PythonVersion)
	require.NotEmpty(t, m.Home)
	require.True(t, filepath.IsAbs(m.BaseInterpreter), m.BaseInterpreter)
	require.Contains(t, m.ShebangsRewritten, "bin/pip")
	require.Positive(t, m.Files)
	require.Positive(t, m.Bytes)
	require.Positive(t, m.Skipped.PycacheDirs) // pip ships compiled bytecode
	var ext []string
	for _, s := range m.ExternalSymlinks {
		ext = append(ext, s.Path)
	}
	require.Contains(t, ext, "bin/python3", "the link to the base interpreter is external")
	require.Contains(t, m.PrefixTextFiles, "bin/activate")
}

func TestPackVenvRunsElsewhere(t *testing.T) {
	venv := sharedVenv(t)
	archive, _ := pack(t, venv, Options{})
	dir := unpack(t, archive)

	pip, err := os.ReadFile(filepath.Join(dir, "bin", "pip"))
	require.NoError(t, err)
	require.NotContains(t, string(pip), venv, "bin/pip still names the packing path")
	require.True(t, strings.HasPrefix(string(pip), "#!/bin/sh\n'''exec' \"$(dirname -- \"$0\")/python"), string(pip))

	out := run(t, filepath.Join(dir, "bin", "python"), "-c", "import json, sys; print(sys.prefix)")
	require.Equal(t, dir, strings.TrimSpace(out))
	out = run(t, filepath.Join(dir, "bin", "pip"), "--version")
	require.Contains(t, out, filepath.Join(dir, "lib"), "pip runs from the unpacked copy: %s", out)

	require.NoError(t, CheckRuntime(dir))

	n, err := Relocate(context.Background(), dir)
	require.NoError(t, err)
	require.Positive(t, n) // bin/activate & co.
	act, err := os.ReadFile(filepath.Join(dir, "bin", "activate"))
	require.NoError(t, err)
	require.Contains(t, string(act), dir)
	require.NotContains(t, string(act), venv)
	n, err = Relocate(context.Background(), dir)
	require.NoError(t, err)
	require.Zero(t, n, "a second Relocate has nothing left to do")
}

// fakeConda builds a conda-like env: conda-meta/, bin/python linking to the
// system interpreter, scripts whose shebangs name the env's absolute prefix.
func fakeConda(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "conda-env")
	py, err := filepath.EvalSymlinks(lookPython(t))
	require.NoError(t, err)
	writeFile(t, filepath.Join(root, "conda-meta", "python-3.11.7-h955ad1f_0.json"), "{}\n", 0o644)
	writeFile(t, filepath.Join(root, "conda-meta", "history"), "==> 2024-01-01 <==\n", 0o644)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	require.NoError(t, os.Symlink(py, filepath.Join(root, "bin", "python")))
	writeFile(t, filepath.Join(root, "bin", "hello"), "#!"+root+"/bin/python\nimport sys\nprint('hello from', sys.argv[0])\n", 0o755)
	writeFile(t, filepath.Join(root, "bin", "withargs"), "#!"+root+"/bin/python -u\nprint('unbuffered')\n", 0o755)
	writeFile(t, filepath.Join(root, "bin", "shtool"), "#!"+root+"/bin/bash\necho tool\n", 0o755)
	writeFile(t, filepath.Join(root, "bin", "plain"), "#!/usr/bin/env python3\nprint(1)\n", 0o755)
	writeFile(t, filepath.Join(root, "lib", "pkgconfig", "x.pc"), "prefix="+root+"\nlibdir=${prefix}/lib\n", 0o644)
	writeFile(t, filepath.Join(root, "lib", "libx.so"), "\x7fELF\x00\x00"+root+"/lib\x00", 0o755)
	writeFile(t, filepath.Join(root, "lib", "python3.11", "site-packages", "m", "__pycache__", "a.cpython-311.pyc"), "x", 0o644)
	writeFile(t, filepath.Join(root, "lib", "python3.11", "site-packages", "m", "__init__.py"), "", 0o644)
	writeFile(t, filepath.Join(root, "lib", "python3.11", "site-packages", "m", "b.pyc"), "x", 0o644)
	require.NoError(t, os.Symlink(root+"/lib/libx.so", filepath.Join(root, "lib", "libx.so.1")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "lib", "fifo"), 0o644))
	return root
}

func TestPackCondaRewritesShebangs(t *testing.T) {
	root := fakeConda(t)
	archive, m := pack(t, root, Options{})
	again, _ := pack(t, root, Options{})
	require.True(t, bytes.Equal(archive, again))

	require.Equal(t, KindConda, m.Kind)
	require.Equal(t, "3.11.7", m.PythonVersion)
	require.Empty(t, m.BaseInterpreter)
	require.Equal(t, []string{"bin/hello", "bin/shtool", "bin/withargs"}, m.ShebangsRewritten)
	require.Equal(t, []string{"lib/pkgconfig/x.pc"}, m.PrefixTextFiles)
	require.Equal(t, []string{"lib/libx.so"}, m.PrefixBinaryFiles)
	require.Equal(t, Skipped{PycacheDirs: 1, PycFiles: 1, Special: 1}, m.Skipped)
	require.Len(t, m.ExternalSymlinks, 1)
	require.Equal(t, "bin/python", m.ExternalSymlinks[0].Path)

	// Move the original away: nothing may still point at it.
	moved := root + ".moved"
	require.NoError(t, os.Rename(root, moved))
	t.Cleanup(func() { os.Rename(moved, root) })
	dir := unpack(t, archive)

	hello, err := os.ReadFile(filepath.Join(dir, "bin", "hello"))
	require.NoError(t, err)
	require.Equal(t, "#!/bin/sh\n'''exec' \"$(dirname -- \"$0\")/python\" \"$0\" \"$@\"\n' '''\nimport sys\nprint('hello from', sys.argv[0])\n", string(hello))
	require.Contains(t, run(t, filepath.Join(dir, "bin", "hello")), "hello from "+filepath.Join(dir, "bin", "hello"))
	require.Contains(t, run(t, filepath.Join(dir, "bin", "withargs")), "unbuffered")
	sh, err := os.ReadFile(filepath.Join(dir, "bin", "shtool"))
	require.NoError(t, err)
	require.Equal(t, "#!/usr/bin/env bash\necho tool\n", string(sh))
	plain, err := os.ReadFile(filepath.Join(dir, "bin", "plain"))
	require.NoError(t, err)
	require.Equal(t, "#!/usr/bin/env python3\nprint(1)\n", string(plain))

	link, err := os.Readlink(filepath.Join(dir, "lib", "libx.so.1"))
	require.NoError(t, err)
	require.Equal(t, "libx.so", link, "absolute link into the env made relative")

	_, err = os.Stat(filepath.Join(dir, "lib", "python3.11", "site-packages", "m", "__pycache__"))
	require.True(t, errors.Is(err, os.ErrNotExist))

	n, err := Relocate(context.Background(), dir)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	pc, err := os.ReadFile(filepath.Join(dir, "lib", "pkgconfig", "x.pc"))
	require.NoError(t, err)
	real, _ := filepath.EvalSymlinks(dir)
	require.Equal(t, "prefix="+real+"\nlibdir=${prefix}/lib\n", string(pc))

	require.NoError(t, CheckRuntime(dir))
}

func TestPackNotAnEnv(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bin", "python"), "", 0o755)
	_, err := Pack(context.Background(), dir, &bytes.Buffer{}, Options{})
	require.EqualError(t, err, "envpack: pack "+dir+": not a Python environment: expected a venv (pyvenv.cfg) or a conda env (conda-meta/)")
	require.ErrorIs(t, err, ErrNotEnv)
	require.NotContains(t, err.Error(), "\n")

	_, err = Pack(context.Background(), filepath.Join(dir, "missing"), &bytes.Buffer{}, Options{})
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Contains(t, err.Error(), "envpack: pack "+filepath.Join(dir, "missing")+": ")
}

func TestPackCancelled(t *testing.T) {
	root := fakeConda(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Pack(ctx, root, &bytes.Buffer{}, Options{})
	require.ErrorIs(t, err, context.Canceled)
}
