package client

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/localrun"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The YARN plan and the --local layout of the same job agree: the same
// link names in the working directory, the same PYTHONPATH entries in the
// same order, the same interpreter and script.
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
	base := taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Args: []string{"--epochs", "1"}}

	for name, job := range map[string]Job{
		"env, src, files, archives": {Job: withScript(base, p("proj/train.py")), PythonEnv: p("venv"), SrcDir: p("proj"),
			Files: []LocalFile{{Path: p("data.csv"), Name: "input.csv"}}, Archives: []LocalFile{{Path: p("models.tar.gz")}}},
		"python inside env, script outside src": {Job: withScript(base, p("alone.py")), PythonEnv: p("venv"), Python: "bin/python3.11",
			SrcDir: p("proj"), Files: []LocalFile{{Path: p("data.csv")}}},
		"no env": {Job: withScript(base, p("alone.py")), Archives: []LocalFile{{Path: p("models.tar.gz"), Name: "m"}}},
	} {
		plan, err := planShipping(job)
		require.NoError(t, err, name)
		sh, err := PlanLocal(job)
		require.NoError(t, err, name)
		staged, err := localrun.Stage(context.Background(), sh)
		require.NoError(t, err, name)
		t.Cleanup(staged.Cleanup)
		require.NotEmpty(t, staged.Dir, name)

		// The same names in the working directory.
		var want, got []string
		for _, it := range plan.items {
			want = append(want, it.link)
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
		require.Len(t, staged.PythonPath, len(plan.pythonPath), name)
		for i, l := range plan.pythonPath {
			same(l, staged.PythonPath[i])
		}
		if plan.pythonEnv != "" {
			same(plan.pythonEnv, staged.EnvDir)
		}
		if strings.Contains(plan.command, "/") {
			same(plan.command, staged.Python)
		} else {
			require.Equal(t, plan.command, staged.Python, name)
		}
		same(plan.args[0], staged.Script)

		// Applied to a run: the script under that interpreter, the job's
		// arguments after it, PYTHONPATH in the plan's order.
		lj, opts := job.Job, localrun.Options{Env: []string{"PYTHONPATH=/old"}}
		staged.Apply(&lj, &opts)
		require.Equal(t, staged.Script, lj.Script, name)
		require.Equal(t, plan.args[1:], lj.Args, name)
		require.Equal(t, staged.Python, opts.Python, name)
		require.Equal(t, staged.Dir, opts.Dir, name)
		wantPP := append(append([]string(nil), staged.PythonPath...), "/old")
		require.Contains(t, opts.Env, "PYTHONPATH="+strings.Join(wantPP, ":"), name)
	}
}

func withScript(j taskspec.Job, script string) taskspec.Job {
	j.Script = script
	return j
}
