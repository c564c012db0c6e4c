package main

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/taskspec"
	"github.com/urfave/cli/v2"
)

// parseRun runs only run's flag parsing and runJob.
func parseRun(t *testing.T, args ...string) (client.Job, error) {
	t.Helper()
	var job client.Job
	var jobErr error
	cmd := runCommand(&env{})
	cmd.Action = func(c *cli.Context) error {
		job, jobErr = runJob(c)
		return nil
	}
	app := &cli.App{Commands: []*cli.Command{cmd}}
	require.NoError(t, app.Run(append([]string{"tfyarn", "run"}, args...)))
	return job, jobErr
}

func TestRunShippingFlags(t *testing.T) {
	job, err := parseRun(t, "--worker", "1c", "--env", "./venv", "--src-dir", "proj",
		"--files", "a.py,data/b.csv#input.csv", "--files", "c.txt",
		"--archives", "x.zip#vocab,models.tar.gz", "--archives", "dir/lib.jar",
		"train.py", "--", "--epochs", "1")
	require.NoError(t, err)
	require.Equal(t, "./venv", job.PythonEnv)
	require.Equal(t, "proj", job.SrcDir)
	require.Equal(t, []client.LocalFile{{Path: "a.py"}, {Path: "data/b.csv", Name: "input.csv"}, {Path: "c.txt"}}, job.Files)
	require.Equal(t, []client.LocalFile{{Path: "x.zip", Name: "vocab"}, {Path: "models.tar.gz"}, {Path: "dir/lib.jar"}}, job.Archives)
	require.Equal(t, "train.py", job.Script)
	require.Equal(t, []string{"--epochs", "1"}, job.Args)
	require.Empty(t, job.Python, "no --python: the client picks (env/bin/python with --env)")

	job, err = parseRun(t, "--worker", "1c", "--env", "env.tar.gz", "--python", "bin/python3.11", "train.py")
	require.NoError(t, err)
	require.Equal(t, "bin/python3.11", job.Python)

	_, err = parseRun(t, "--worker", "1c", "--archives", "x.zip#a/b", "--", "true")
	require.EqualError(t, err, `--archives "x.zip#a/b": invalid name "a/b" in the container: must not contain '/'`)
	_, err = parseRun(t, "--worker", "1c", "--files", "#x", "--", "true")
	require.EqualError(t, err, `--files "#x": expected PATH or PATH#NAME`)
}

// Missing local files: exit 2, one line, before any RPC (the configuration
// names a dead RM, so getting that far would fail differently).
func TestRunMissingLocalFiles(t *testing.T) {
	conf := deadConf(t)
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	require.NoError(t, os.MkdirAll(venv, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(venv, "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644))
	notArchive := filepath.Join(dir, "notarchive.zip")
	require.NoError(t, os.WriteFile(notArchive, []byte("just text\n"), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--env", "no-such-venv"}, "tfyarn: env no-such-venv: no such file or directory"},
		{[]string{"--env", dir}, "tfyarn: env " + dir + " is not a Python environment"},
		{[]string{"--files", "a.py,no-such.csv"}, "tfyarn: file a.py: no such file or directory"},
		{[]string{"--archives", "no-such.zip#x"}, "tfyarn: archive no-such.zip: no such file or directory"},
		{[]string{"--archives", notArchive + "#na"}, "tfyarn: archive " + notArchive + " is not a readable zip archive (zip: not a valid zip file); fix it, or ship the file as it is with --files"},
		{[]string{"--src-dir", "no-such-dir"}, "tfyarn: src dir no-such-dir: no such file or directory"},
		{[]string{"--env", venv, "--files", filepath.Join(venv, "pyvenv.cfg") + "#env"}, `both want the name "env" in the container`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			for _, local := range []bool{false, true} {
				args := append([]string{"--conf-dir", conf, "run", "--worker", "1c"}, tc.args...)
				if local {
					args = append([]string{"run", "--local", "--worker", "1c"}, tc.args...)
				}
				stdout, stderr, code := runCLI(t, append(args, "--", "true")...)
				require.Equal(t, exitUsage, code, stderr)
				require.Empty(t, stdout)
				require.Contains(t, stderr, tc.want)
				require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			}
		})
	}
}

func TestRunHelpShowsShipping(t *testing.T) {
	stdout, _, code := runCLI(t, "run", "--help")
	require.Equal(t, exitOK, code)
	for _, s := range []string{"--env DIR", "--files PATH[#NAME]", "--archives PATH[#NAME]", "--src-dir DIR", "--env ./venv --src-dir ."} {
		require.Contains(t, stdout, s)
	}
}

// makeVenv creates a real venv (no pip: fast, offline) with a package the
// system python lacks.
func makeVenv(t *testing.T) string {
	t.Helper()
	venv := filepath.Join(t.TempDir(), "venv")
	// The system's interpreter, as the test environments' (scripts/tfenv.sh): every Unix user can
	// run it, so the venv works in a container that runs as its user (LinuxContainerExecutor).
	out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", venv).CombinedOutput()
	require.NoError(t, err, "%s", out)
	sites, err := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	require.NoError(t, err)
	require.Len(t, sites, 1)
	pkg := filepath.Join(sites[0], "tfyarn_probe")
	require.NoError(t, os.MkdirAll(pkg, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(pkg, "__init__.py"), []byte("VALUE = 42\n"), 0o644))
	return venv
}

// --local --env DIR: the tasks' python is DIR's, --src-dir is importable,
// --files and --archives are in the tasks' working directory.
func TestRunLocalShipping(t *testing.T) {
	venv := makeVenv(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "proj")
	require.NoError(t, os.MkdirAll(src, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "helper.py"), []byte("NAME = 'helper'\n"), 0o644))
	data := filepath.Join(dir, "data.csv")
	require.NoError(t, os.WriteFile(data, []byte("a,b\n"), 0o644))
	zipPath := filepath.Join(dir, "vocab.zip")
	zf, err := os.Create(zipPath)
	require.NoError(t, err)
	zw := zip.NewWriter(zf)
	w, err := zw.Create("words/list.txt")
	require.NoError(t, err)
	_, err = w.Write([]byte("hello\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, zf.Close())

	program := `import os, sys, tfyarn_probe, helper
print("VALUE", tfyarn_probe.VALUE, helper.NAME)
print("PREFIX", sys.prefix)
print("DATA", open("input.csv").read().strip())
print("VOCAB", open("vocab/words/list.txt").read().strip())`
	stdout, stderr, code := runCLI(t, "run", "--local", "--worker", "2x1c", "--env", venv, "--src-dir", src,
		"--files", data+"#input.csv", "--archives", zipPath, "--", "python", "-c", program)
	require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
	for i := 0; i < 2; i++ {
		task := "[worker:" + string(rune('0'+i)) + "] "
		require.Contains(t, stdout, task+"VALUE 42 helper")
		require.Contains(t, stdout, task+"PREFIX "+venv)
		require.Contains(t, stdout, task+"DATA a,b")
		require.Contains(t, stdout, task+"VOCAB hello")
	}

	// An archive is for YARN only.
	_, stderr, code = runCLI(t, "run", "--local", "--worker", "1c", "--env", zipPath, "--", "true")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "env "+zipPath+": expected an environment directory or a .tar.gz/.tgz archive")
}

func TestRunAllocTimeoutAndAMNodeLabel(t *testing.T) {
	job, err := parseRun(t, "--worker", "1c", "--node-label", "gpu", "--", "true")
	require.NoError(t, err)
	require.Equal(t, taskspec.DefaultAllocTimeout, job.AllocTimeout)
	require.Equal(t, "gpu", job.NodeLabel)
	require.Empty(t, job.AMNodeLabel, "the AM does not inherit --node-label")
	job, err = parseRun(t, "--worker", "1c", "--alloc-timeout", "90s", "--am-node-label", "am", "--", "true")
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, job.AllocTimeout)
	require.Equal(t, "am", job.AMNodeLabel)
	_, err = parseRun(t, "--worker", "1c", "--alloc-timeout", "0s", "--", "true")
	require.EqualError(t, err, "--alloc-timeout 0s: give a positive duration, e.g. 5m")
	_, err = parseRun(t, "--worker", "1c", "--am-node-label", "a,b", "--", "true")
	require.EqualError(t, err, `--am-node-label "a,b": give one node label`)
}

// A variable tfyarn sets in every task cannot be given with --setenv (its
// value would be ignored): exit 2, one line, before any RPC, on YARN and
// with --local.
func TestRunRefusesTfyarnsVariables(t *testing.T) {
	conf := deadConf(t)
	for _, name := range []string{"TFYARN_TASK", "TFYARN_TASK_PORT", "HADOOP_TOKEN_FILE_LOCATION", "HADOOP_USER_NAME", "TFYARN_PREEMPTION_FILE"} {
		for _, local := range []bool{false, true} {
			args := []string{"--conf-dir", conf, "run", "--worker", "1c"}
			if local {
				args = []string{"run", "--local", "--worker", "1c"}
			}
			stdout, stderr, code := runCLI(t, append(args, "--setenv", name+"=x", "--", "true")...)
			require.Equal(t, exitUsage, code, stderr)
			require.Empty(t, stdout)
			require.Equal(t, "tfyarn: "+name+" is set by tfyarn for each task; drop it from the environment\n", stderr)
		}
	}
	// Other TFYARN_ names are the job's own.
	stdout, stderr, code := runCLI(t, "run", "--local", "--worker", "1c", "--setenv", "TFYARN_FAULT_DIR=x", "--", "sh", "-c", `echo "$TFYARN_FAULT_DIR"`)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "[worker:0] x")
}

// A variable the job's framework sets in its tasks cannot be given with
// --setenv or --secret-env either: exit 2, one line naming it, the
// framework and what to do, before any RPC (the configuration names a dead
// RM), on YARN and with --local. Another framework's variable passes.
func TestRunRefusesTheFrameworksVariables(t *testing.T) {
	conf := deadConf(t)
	script := filepath.Join(t.TempDir(), "train.py")
	require.NoError(t, os.WriteFile(script, []byte("print('ran')\n"), 0o644))
	for _, tc := range []struct {
		framework, name, want string
	}{
		{"jax", "JAX_PROCESS_ID", "JAX_PROCESS_ID is set by --framework jax in each task (the worker's index); drop it from the environment"},
		{"jax", "JAX_COORDINATOR_ADDRESS", "JAX_COORDINATOR_ADDRESS is set by --framework jax in each task (worker:0's address); drop it from the environment"},
		{"pytorch", "MASTER_ADDR", "MASTER_ADDR is set by --framework pytorch in each task (torchrun sets it in each process); drop it from the environment"},
		{"tensorflow", "TF_CONFIG", "TF_CONFIG is set by --framework tensorflow in each task (the cluster and the task's place in it); drop it from the environment"},
	} {
		for _, local := range []bool{false, true} {
			args := []string{"--conf-dir", conf, "run"}
			if local {
				args = []string{"run", "--local"}
			}
			args = append(args, "--worker", "2x1c", "--framework", tc.framework)
			stdout, stderr, code := runCLI(t, append(args, "--setenv", tc.name+"=x", script)...)
			require.Equal(t, exitUsage, code, stderr)
			require.Empty(t, stdout)
			require.Equal(t, "tfyarn: "+tc.want+"\n", stderr)
		}
		t.Setenv(tc.name, "x")
		stdout, stderr, code := runCLI(t, "--conf-dir", conf, "run", "--worker", "2x1c", "--framework", tc.framework, "--secret-env", tc.name, script)
		require.Equal(t, exitUsage, code, stderr)
		require.Empty(t, stdout)
		require.Equal(t, "tfyarn: --secret-env "+tc.name+strings.TrimSuffix(strings.TrimPrefix(tc.want, tc.name), "drop it from the environment")+"pick another name\n", stderr)
	}
	// TF_CONFIG is no JAX job's business: it reaches the program.
	stdout, stderr, code := runCLI(t, "run", "--local", "--worker", "1c", "--framework", "jax", "--setenv", "TF_CONFIG=mine", "--", "sh", "-c", `echo "$TF_CONFIG"`)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "[worker:0] mine")
}

func TestRunPriority(t *testing.T) {
	job, err := parseRun(t, "--worker", "1c", "--", "true")
	require.NoError(t, err)
	require.Zero(t, job.Priority, "no --priority leaves the queue's default")
	job, err = parseRun(t, "--worker", "1c", "--priority", "7", "--", "true")
	require.NoError(t, err)
	require.EqualValues(t, 7, job.Priority)
	for _, bad := range []string{"high", "-1", "1.5", "2147483648", ""} {
		_, err = parseRun(t, "--worker", "1c", "--priority", bad, "--", "true")
		require.EqualError(t, err, fmt.Sprintf("--priority %q: give a whole number from 0 to 2147483647, e.g. --priority 5", bad))
	}
}

func TestRunStartAfter(t *testing.T) {
	job, err := parseRun(t, "--worker", "2x1c", "--ps", "1c", "--start-after", "worker=ps", "--", "true")
	require.NoError(t, err)
	require.Equal(t, taskspec.StartOrder{taskspec.Worker: {taskspec.PS}}, job.StartAfter)
	_, err = parseRun(t, "--worker", "1c", "--start-after", "worker", "--", "true")
	require.EqualError(t, err, `--start-after "worker": expected TYPE=TYPE pairs, e.g. worker=ps (workers start after every ps)`)
}
