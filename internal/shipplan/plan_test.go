package shipplan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

func TestDefaultLinkNames(t *testing.T) {
	require.Equal(t, "data.csv", LocalFile{Path: "in/data.csv"}.fileName())
	require.Equal(t, "y", LocalFile{Path: "in/data.csv", Name: "y"}.fileName())
	for in, want := range map[string]string{
		"a/vocab.zip": "vocab", "m.tar.gz": "m", "m.TGZ": "m", "lib.jar": "lib", "t.tar": "t", ".zip": ".zip",
	} {
		require.Equal(t, want, LocalFile{Path: in}.archiveName(), in)
	}
	require.Equal(t, "a_b.zip", cacheName("/x/a:b.zip"))
	require.Equal(t, "x__touch_pwned__id______.tar.gz", cacheName("/x/x$(touch pwned)`id`{{}}\xff.tar.gz"))
	require.Equal(t, "My-data_1.2+x@a,b=c.csv", cacheName("My-data_1.2+x@a,b=c.csv"))
}

func TestPython(t *testing.T) {
	for _, tc := range []struct{ env, python, want string }{
		{"", "", DefaultPython},
		{"", "/opt/venv/bin/python", "/opt/venv/bin/python"},
		{"./venv", "", "env/bin/python"},
		{"./venv", "bin/python3.11", "env/bin/python3.11"},
		{"./venv", "./bin/python3", "env/bin/python3"},
		{"./venv", "/usr/bin/python3", "/usr/bin/python3"},
		{"./venv", "python3", "python3"},
	} {
		require.Equal(t, tc.want, Inputs{PythonEnv: tc.env, Python: tc.python}.python(), "%+v", tc)
	}
}

// project is a directory with a venv skeleton, a source tree, a file and an
// archive.
func project(t *testing.T) string {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("venv/pyvenv.cfg", "home = /usr/bin\n")
	write("conda/conda-meta/history", "")
	write("proj/train.py", "import util\n")
	write("proj/util.py", "X = 1\n")
	write("proj/pkg/__init__.py", "")
	write("proj/pkg/__pycache__/x.cpython-311.pyc", "junk")
	write("proj/pkg/y.pyc", "junk")
	write("proj/.git/HEAD", "ref: x")
	write("proj/.venv/pyvenv.cfg", "home = /usr/bin\n")
	write("proj/.venv/lib/big", "big")
	write("data.csv", "a,b\n1,2\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vocab.zip"), zipOf(t, map[string]string{"words/en.txt": "hello"}), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "env.tgz"), tgz(t, map[string]string{"bin/python3": "#!", "lib/x.py": ""}), 0o644))
	write("notes.rar", "x")
	return dir
}

func TestPlanShipping(t *testing.T) {
	dir := project(t)
	p := func(rel string) string { return filepath.Join(dir, rel) }
	job := Inputs{Script: p("proj/train.py"), Args: []string{"--epochs", "1"},
		PythonEnv: p("venv"), SrcDir: p("proj"),
		Files:    []LocalFile{{Path: p("data.csv")}, {Path: p("vocab.zip"), Name: "vocab-file.zip"}},
		Archives: []LocalFile{{Path: p("vocab.zip")}, {Path: p("env.tgz"), Name: "other"}}}
	plan, err := Make(job)
	require.NoError(t, err)
	require.Equal(t, []Item{
		{Link: "env", Local: p("venv"), Kind: EnvLayers, Cache: "env-layer."},
		{Link: "src", Local: p("proj"), Kind: SrcDir, Cache: "src.tar.gz", Access: hdfs.Private},
		{Link: "data.csv", Local: p("data.csv"), Kind: File, Cache: "data.csv", Access: hdfs.Private},
		{Link: "vocab-file.zip", Local: p("vocab.zip"), Kind: File, Cache: "vocab.zip", Access: hdfs.Private},
		{Link: "vocab", Local: p("vocab.zip"), Kind: Archive, Cache: "vocab.zip", Access: hdfs.Private},
		{Link: "other", Local: p("env.tgz"), Kind: Archive, Cache: "env.tgz", Access: hdfs.Private},
	}, plan.Items, "only the environment is public")
	require.Equal(t, "env/bin/python", plan.Command)
	require.Equal(t, []string{"src/train.py", "--epochs", "1"}, plan.Args, "the script runs from inside src/")
	require.Equal(t, "env", plan.PythonEnv)
	require.Equal(t, []string{"src"}, plan.PythonPath)

	// A conda env ships as one archive; a venv's layers own their names.
	plan, err = Make(Inputs{PythonEnv: p("conda")})
	require.NoError(t, err)
	require.Equal(t, Item{Link: "env", Local: p("conda"), Kind: EnvDir, Cache: "env.tar.gz"}, plan.Items[0])
	_, err = Make(Inputs{PythonEnv: p("venv"),
		Files: []LocalFile{{Path: p("data.csv"), Name: "env.layer03"}}})
	require.ErrorContains(t, err, `file `+p("data.csv")+` wants the name "env.layer03" in the container, which the layers of env `+p("venv")+` use; rename it (PATH#NAME)`)

	// A script outside the source tree, an archived env, no src: the script
	// is shipped alone.
	job = Inputs{Script: p("proj/train.py"), PythonEnv: p("env.tgz"), Python: "bin/python3"}
	plan, err = Make(job)
	require.NoError(t, err)
	require.Equal(t, []Item{
		{Link: "env", Local: p("env.tgz"), Kind: Archive, Cache: "env.tgz"},
		{Link: "train.py", Local: p("proj/train.py"), Kind: File, Cache: "train.py", Access: hdfs.Private},
	}, plan.Items)

	// The same archive as the env and as --archives: one cache entry,
	// private for both (else one would close it under the other).
	job.Archives = []LocalFile{{Path: p("env.tgz"), Name: "again"}}
	plan, err = Make(job)
	require.NoError(t, err)
	require.Equal(t, []Item{
		{Link: "env", Local: p("env.tgz"), Kind: Archive, Cache: "env.tgz", Access: hdfs.Private},
		{Link: "train.py", Local: p("proj/train.py"), Kind: File, Cache: "train.py", Access: hdfs.Private},
		{Link: "again", Local: p("env.tgz"), Kind: Archive, Cache: "env.tgz", Access: hdfs.Private},
	}, plan.Items)
	job.Archives = nil
	require.Equal(t, "env/bin/python3", plan.Command)
	require.Equal(t, []string{"train.py"}, plan.Args)
	require.Nil(t, plan.PythonPath)

	// A command and nothing to ship.
	plan, err = Make(Inputs{})
	require.NoError(t, err)
	require.Empty(t, plan.Items)
	require.Empty(t, plan.Command)
}
