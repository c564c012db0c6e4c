package localrun

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/shipplan"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The shipping plan YARN ships and the --local layout of it agree: the
// same link names in the working directory, the same PYTHONPATH entries in
// the same order, the same interpreter and script.
func TestLocalPlanAgreesWithYARN(t *testing.T) {
	dir := t.TempDir()
	p := func(rel string) string { return filepath.Join(dir, rel) }
	write := func(rel, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p(rel)), 0o755))
		require.NoError(t, os.WriteFile(p(rel), []byte(content), 0o644))
	}
	write("venv/pyvenv.cfg", "home = /usr/bin\n")
	write("venv/bin/python", "#!")
	write("venv/bin/python3.11", "#!")
	write("proj/train.py", "import util\n")
	write("proj/util.py", "X = 1\n")
	write("alone.py", "print(1)\n")
	write("data.csv", "a,b\n")
	require.NoError(t, os.WriteFile(p("models.tar.gz"), tgz(t, map[string]string{"m/w.bin": "w"}), 0o644))
	worker, err := taskspec.ParseSpec(taskspec.Worker, "1c")
	require.NoError(t, err)
	args := []string{"--epochs", "1"}

	for name, in := range map[string]shipplan.Inputs{
		"env, src, files, archives": {Script: p("proj/train.py"), Args: args, PythonEnv: p("venv"), SrcDir: p("proj"),
			Files: []shipplan.LocalFile{{Path: p("data.csv"), Name: "input.csv"}}, Archives: []shipplan.LocalFile{{Path: p("models.tar.gz")}}},
		"python inside env, script outside src": {Script: p("alone.py"), Args: args, PythonEnv: p("venv"), Python: "bin/python3.11",
			SrcDir: p("proj"), Files: []shipplan.LocalFile{{Path: p("data.csv")}}},
		"no env": {Script: p("alone.py"), Args: args, Archives: []shipplan.LocalFile{{Path: p("models.tar.gz"), Name: "m"}}},
	} {
		plan, err := shipplan.Make(in)
		require.NoError(t, err, name)
		staged, err := Stage(context.Background(), plan)
		require.NoError(t, err, name)
		t.Cleanup(staged.Cleanup)
		require.NotEmpty(t, staged.Dir, name)

		// The same names in the working directory.
		var want, got []string
		for _, it := range plan.Items {
			want = append(want, it.Link)
		}
		entries, err := os.ReadDir(staged.Dir)
		require.NoError(t, err)
		for _, e := range entries {
			got = append(got, e.Name())
		}
		sort.Strings(want)
		require.Equal(t, want, got, name)

		// What a name in the container is, the same thing locally.
		same := func(inContainer, local string) {
			a, err := filepath.EvalSymlinks(filepath.Join(staged.Dir, inContainer))
			require.NoError(t, err, "%s: %s", name, inContainer)
			b, err := filepath.EvalSymlinks(local)
			require.NoError(t, err, "%s: %s", name, local)
			require.Equal(t, a, b, "%s: %s", name, inContainer)
		}
		require.Len(t, staged.PythonPath, len(plan.PythonPath), name)
		for i, l := range plan.PythonPath {
			same(l, staged.PythonPath[i])
		}
		if plan.PythonEnv != "" {
			same(plan.PythonEnv, staged.EnvDir)
		}
		if strings.Contains(plan.Command, "/") {
			same(plan.Command, staged.Python)
		} else {
			require.Equal(t, plan.Command, staged.Python, name)
		}
		same(plan.Args[0], staged.Script)

		// Applied to a run: the script under that interpreter, the job's
		// arguments after it, PYTHONPATH in the plan's order.
		job := taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Script: in.Script, Args: in.Args}
		lj, opts := job, Options{Env: []string{"PYTHONPATH=/old"}}
		staged.Apply(&lj, &opts)
		require.Equal(t, staged.Script, lj.Script, name)
		require.Equal(t, plan.Args[1:], lj.Args, name)
		require.Equal(t, staged.Python, opts.Python, name)
		require.Equal(t, staged.Dir, opts.Dir, name)
		wantPP := append(append([]string(nil), staged.PythonPath...), "/old")
		require.Contains(t, opts.Env, "PYTHONPATH="+strings.Join(wantPP, ":"), name)
	}
}

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
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(files[n]))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}
