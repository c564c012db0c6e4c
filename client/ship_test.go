package client

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/envpack"
	"github.com/tfyarn/tfyarn/taskspec"
)

func TestParseLocalFile(t *testing.T) {
	for in, want := range map[string]LocalFile{
		"data.csv":                   {Path: "data.csv"},
		"x.zip#vocab":                {Path: "x.zip", Name: "vocab"},
		"dir/a#b.tar.gz#models":      {Path: "dir/a#b.tar.gz", Name: "models"},
		"m.zip#My_model-2.1+x@a,b=c": {Path: "m.zip", Name: "My_model-2.1+x@a,b=c"},
	} {
		got, err := ParseLocalFile(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for in, msg := range map[string]string{
		"#name":            `"#name": expected PATH or PATH#NAME`,
		"x.zip#":           `"x.zip#": invalid name "" in the container`,
		"x.zip#a/b":        `"x.zip#a/b": invalid name "a/b" in the container: must not contain '/'`,
		"x.zip#..":         `"x.zip#..": invalid name ".." in the container`,
		"":                 `"": expected PATH or PATH#NAME`,
		"x.tgz#a\x00":      `must not contain '/'`,
		"x.tgz#$(touch X)": `"x.tgz#$(touch X)": invalid name "$(touch X)" in the container: use only letters, digits and . _ - + @ , = (name it with PATH#NAME)`,
		"x.tgz#a`id`":      "invalid name \"a`id`\" in the container: use only letters",
		"x.tgz#a\"b":       `invalid name "a\"b" in the container: use only letters`,
		"x.tgz#a\\b":       `invalid name "a\\b" in the container: use only letters`,
		"x.tgz#{{a}}":      `invalid name "{{a}}" in the container: use only letters`,
		"x.tgz#<CPS>":      `invalid name "<CPS>" in the container: use only letters`,
		"x.tgz#a:b":        `invalid name "a:b" in the container: use only letters`,
		"x.tgz#a b":        `invalid name "a b" in the container: use only letters`,
		"x.tgz#a\nb":       `invalid name "a\nb" in the container: use only letters`,
		"x.tgz#\xff":       `invalid name "\xff" in the container: use only letters`,
	} {
		_, err := ParseLocalFile(in)
		require.ErrorContains(t, err, msg, in)
	}
}

// project is a directory with a venv skeleton, a source tree, a file and
// an archive (shipplan's tests check the plan itself on a richer one; these
// stop at names and kinds, before any archive is read).
func project(t *testing.T) string {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("venv/pyvenv.cfg", "home = /usr/bin\n")
	write("proj/train.py", "import util\n")
	write("proj/util.py", "X = 1\n")
	write("proj/pkg/__init__.py", "")
	write("proj/pkg/__pycache__/x.cpython-311.pyc", "junk")
	write("proj/pkg/y.pyc", "junk")
	write("proj/.git/HEAD", "ref: x")
	write("proj/.venv/pyvenv.cfg", "home = /usr/bin\n")
	write("proj/.venv/lib/big", "big")
	write("data.csv", "a,b\n1,2\n")
	write("vocab.zip", "PK")
	write("notes.rar", "x")
	return dir
}

// Missing or unusable local inputs fail Submit with one line naming them,
// before any RPC (the configuration names a dead cluster).
func TestSubmitRejectsBadLocalFiles(t *testing.T) {
	dir := project(t)
	p := func(rel string) string { return filepath.Join(dir, rel) }
	worker, err := taskspec.ParseSpec(taskspec.Worker, "1c")
	require.NoError(t, err)
	cmd := taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Command: "true"}
	for _, tc := range []struct {
		job  Job
		want string
	}{
		{Job{Job: cmd, PythonEnv: p("nope")}, "env " + p("nope") + ": no such file or directory"},
		{Job{Job: cmd, PythonEnv: p("proj")}, "env " + p("proj") + " is not a Python environment"},
		{Job{Job: cmd, PythonEnv: p("data.csv")}, "env " + p("data.csv") + ": expected an environment directory or a .tar.gz/.tgz archive of one (tfyarn pack)"},
		{Job{Job: cmd, Files: []LocalFile{{Path: p("nope.csv")}}}, "file " + p("nope.csv") + ": no such file or directory"},
		{Job{Job: cmd, Files: []LocalFile{{Path: p("proj")}}}, "file " + p("proj") + " is not a regular file"},
		{Job{Job: cmd, Archives: []LocalFile{{Path: p("nope.zip")}}}, "archive " + p("nope.zip") + ": no such file or directory"},
		{Job{Job: cmd, Archives: []LocalFile{{Path: p("notes.rar")}}}, "YARN unpacks only .tar.gz, .tgz, .tar, .zip and .jar files"},
		{Job{Job: cmd, SrcDir: p("nope")}, "src dir " + p("nope") + ": no such file or directory"},
		{Job{Job: cmd, SrcDir: p("data.csv")}, "src dir " + p("data.csv") + " is not a directory"},
		{Job{Job: cmd, Files: []LocalFile{{Path: p("data.csv")}, {Path: p("proj/../data.csv")}}}, `both want the name "data.csv" in the container`},
		{Job{Job: cmd, Files: []LocalFile{{Path: p("data.csv"), Name: "tfyarn"}}}, `file ` + p("data.csv") + ` and tfyarn's launcher both want the name "tfyarn"`},
		{Job{Job: cmd, PythonEnv: p("venv"), Archives: []LocalFile{{Path: p("vocab.zip"), Name: "env"}}}, `both want the name "env"`},
	} {
		_, err := submitTo(context.Background(), deadConf(), tc.job)
		require.ErrorContains(t, err, tc.want)
		var ve *taskspec.ValidationError
		require.ErrorAs(t, err, &ve)
	}
}

func TestPackSrcDirIsDeterministicAndSkipsJunk(t *testing.T) {
	dir := project(t)
	src := filepath.Join(dir, "proj")
	require.NoError(t, os.Chmod(filepath.Join(src, "util.py"), 0o700))
	require.NoError(t, os.Symlink("util.py", filepath.Join(src, "link.py")))
	var a, b bytes.Buffer
	da, err := envpack.PackDir(context.Background(), src, &a)
	require.NoError(t, err)
	// Touch everything: mtimes must not matter.
	require.NoError(t, os.Chtimes(filepath.Join(src, "train.py"), envpack.ArchiveTime.AddDate(3, 0, 0), envpack.ArchiveTime.AddDate(3, 0, 0)))
	db, err := envpack.PackDir(context.Background(), src, &b)
	require.NoError(t, err)
	require.Equal(t, a.Bytes(), b.Bytes())
	require.Equal(t, da, db)
	sum := sha256.Sum256(a.Bytes())
	require.Equal(t, hex.EncodeToString(sum[:]), da)

	zr, err := gzip.NewReader(&a)
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	var names []string
	modes := map[string]int64{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, h.Name)
		modes[h.Name] = h.Mode
		require.True(t, h.ModTime.Equal(envpack.ArchiveTime), h.Name)
		if h.Name == "link.py" {
			require.Equal(t, "util.py", h.Linkname)
		}
	}
	require.Equal(t, []string{"link.py", "pkg/", "pkg/__init__.py", "train.py", "util.py"}, names)
	require.EqualValues(t, 0o755, modes["util.py"])
	require.EqualValues(t, 0o644, modes["train.py"])

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = envpack.PackDir(ctx, src, io.Discard)
	require.ErrorIs(t, err, context.Canceled)
}
