package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/taskspec"
	"github.com/urfave/cli/v2"
)

// Bad runs fail before any RPC: the configuration names a dead RM.
func TestRunUsageErrors(t *testing.T) {
	conf := deadConf(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--worker", "3x1q", "--", "true"}, `worker spec "3x1q": bad vcores "1q"; expected <N>c, e.g. 4c`},
		{[]string{"run", "--worker", "1c"}, "run needs a script or a command after --"},
		{[]string{"run", "--worker", "1c", "--success", "most", "--", "true"}, `--success: unknown success rule "most"; expected chief or all`},
		{[]string{"run", "--worker", "1c", "--node-label", "ps=gpu", "--", "true"}, `--node-label "ps=gpu": the job has no ps tasks`},
		{[]string{"run", "--worker", "1c", "--node-label", "boss=gpu", "--", "true"}, `unknown task type "boss"`},
		{[]string{"run", "--worker", "1c", "no-such-script.py"}, "script no-such-script.py: no such file or directory"},
		{[]string{"run", "--", "true"}, "the job has no tasks"},
		{[]string{"run", "--ps", "1c", "--", "true"}, "the job has no chief and no worker"},
		{[]string{"run", "--worker", "1c", "--setenv", "NOEQUALS", "--", "true"}, `--setenv "NOEQUALS": expected KEY=VALUE`},
		{[]string{"run", "--worker", "1c", "--setenv", "TF_CONFIG=x", "--", "true"}, "TF_CONFIG is set by --framework tensorflow in each task"},
		{[]string{"run", "--worker", "1c,256m", "--worker", "3x1c,256m", "--", "true"}, `--worker is given 2 times ("1c,256m", "3x1c,256m"); give it once with the whole group, e.g. --worker 3x1c,256m`},
		{[]string{"run", "--chief", "1c", "--worker", "1c", "--chief", "1c", "--", "true"}, `--chief is given 2 times`},
		{[]string{"run", "--worker", "1c", "--setenv", "A=1", "--setenv", "A=2", "--", "true"}, "--setenv A is given twice; give each variable once"},
		{[]string{"run", "--worker", "1c", "--am-memory", "lots", "--", "true"}, `--am-memory "lots": expected a size like 256m or 1g`},
		{[]string{"run", "--worker", "1c", "--output", "xml", "--", "true"}, `--output "xml": expected table, json or events`},
		{[]string{"run", "--worker", "1c", "--framework", "mxnet", "--", "true"}, `--framework: unknown framework "mxnet"; expected one of jax, lightgbm, pytorch, tensorflow, xgboost`},
		{[]string{"run", "--chief", "1c", "--worker", "1c", "--framework", "pytorch", "--", "true"}, "--framework pytorch has no chief tasks; give its tasks as --worker"},
		{[]string{"run", "--worker", "2x1c", "--ps", "1c", "--framework", "jax", "--", "true"}, "--framework jax has no ps tasks"},
		{[]string{"run", "--worker", "2x1c", "--framework", "pytorch", "--", "true"}, "--framework pytorch runs a script under torchrun"},
		{[]string{"run", "--worker", "2x1c", "--nproc-per-node", "2", "--", "true"}, "--nproc-per-node is for --framework pytorch"},
		{[]string{"run", "--worker", "2x1c", "--min-workers", "1", "--framework", "jax", "--", "true"}, "--min-workers is for --framework pytorch"},
		{[]string{"run", "--worker", "2x1c", "--min-workers", "3", "--framework", "pytorch", "train.py"}, "--min-workers 3: give from 1 to the job's 2 workers"},
		{[]string{"run", "--worker", "2x1c", "--min-workers", "1", "--max-restarts", "2", "--framework", "pytorch", "train.py"}, "--min-workers goes on without a lost worker instead of restarting the job"},
		{[]string{"run", "--worker", "2x1c", "--elastic-last-call", "5s", "--framework", "pytorch", "train.py"}, "--elastic-last-call is for an elastic job: add --min-workers N"},
		{[]string{"run", "--worker", "2x1c", "--min-workers", "1", "--elastic-last-call", "500ms", "--framework", "pytorch", "train.py"}, "--elastic-last-call 500ms: give whole seconds from 1s to 10m0s"},
		{[]string{"run", "--worker", "2x1c", "--framework", "jax", "--nproc-per-node", "-1", "--", "true"}, "--nproc-per-node -1 is negative"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{"--conf-dir", conf}, tc.args...)...)
			require.Equal(t, exitUsage, code, stderr)
			require.Empty(t, stdout)
			require.Contains(t, stderr, tc.want)
			require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}
}

func TestRunHelpShowsTheSpecGrammar(t *testing.T) {
	stdout, _, code := runCLI(t, "run", "--help")
	require.Equal(t, exitOK, code)
	require.Contains(t, stdout, "[N x] <vcores>c [, <mem>g|<mem>m] [, <k>gpu]")
	require.Contains(t, stdout, "--setenv")
	require.Contains(t, stdout, "tfyarn run --local ", "an example of --local")
	stdout, _, _ = runCLI(t, "--help")
	require.NotContains(t, stdout, " am ", "the AM command is hidden")
}

func TestParseMiB(t *testing.T) {
	for in, want := range map[string]int64{"256": 256, "256m": 256, "1g": 1024, "2G": 2048} {
		got, err := parseMiB(in)
		require.NoError(t, err)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "0", "-1m", "1.5g", "x"} {
		_, err := parseMiB(bad)
		require.Error(t, err, bad)
	}
}

func TestRunJobForms(t *testing.T) {
	script := filepath.Join(t.TempDir(), "train.py")
	require.NoError(t, os.WriteFile(script, []byte("print(1)\n"), 0o644))
	for _, tc := range []struct {
		args  []string
		check func(t *testing.T, j client.Job)
	}{
		{[]string{"--worker", "3x1c", "--", "sh", "-c", "exit 0"}, func(t *testing.T, j client.Job) {
			require.Equal(t, "sh", j.Command)
			require.Equal(t, []string{"-c", "exit 0"}, j.Args)
			require.Empty(t, j.Script)
			require.Empty(t, j.Success, "the client picks the default")
		}},
		{[]string{"--chief", "1c", "--worker", "2x1c", "--python", "/opt/py/bin/python", script, "--", "--epochs", "3"}, func(t *testing.T, j client.Job) {
			require.Equal(t, script, j.Script)
			require.Empty(t, j.Command)
			require.Equal(t, []string{"--epochs", "3"}, j.Args)
			require.Equal(t, "/opt/py/bin/python", j.Python)
		}},
		{[]string{"--worker", "5000x1c", "--", "true"}, func(t *testing.T, j client.Job) {
			require.Zero(t, j.AMMemoryMiB, "no --am-memory: the job's size decides (submit.AMMemoryFor)")
		}},
		{[]string{"--worker", "5000x1c", "--am-memory", "1g", "--", "true"}, func(t *testing.T, j client.Job) {
			require.EqualValues(t, 1024, j.AMMemoryMiB)
		}},
		{[]string{"--worker", "2x1c", "--ps", "1c", "--success", "all", "--node-label", "gpu", "--node-label", "ps=cpu", "--", "true"}, func(t *testing.T, j client.Job) {
			require.Equal(t, taskspec.SuccessAll, j.Success)
			require.Equal(t, "gpu", j.NodeLabel)
			g, _ := j.Group("ps")
			require.Equal(t, "cpu", g.NodeLabel)
		}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var got client.Job
			cmd := runCommand(&env{})
			cmd.Action = func(c *cli.Context) error {
				j, err := runJob(c)
				got = j
				return err
			}
			app := &cli.App{Commands: []*cli.Command{cmd}, ExitErrHandler: func(*cli.Context, error) {}}
			require.NoError(t, app.Run(append([]string{"tfyarn", "run"}, tc.args...)))
			tc.check(t, got)
		})
	}
}
