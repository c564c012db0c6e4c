package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// noCluster makes sure a local run cannot find a Hadoop configuration: it
// must not need one.
func noCluster(t *testing.T) {
	t.Setenv("HADOOP_CONF_DIR", "")
	t.Setenv("HADOOP_HOME", "")
}

type localTFConfig struct {
	Cluster map[string][]string `json:"cluster"`
	Task    struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	} `json:"task"`
}

// linesOf returns what task printed, without its "[task] " prefix.
func linesOf(out, task string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "["+task+"] "); ok {
			lines = append(lines, rest)
		}
	}
	return lines
}

func TestRunLocalGivesEveryTaskTFConfig(t *testing.T) {
	noCluster(t)
	stdout, stderr, code := runCLI(t, "run", "--local", "--worker", "2x1c", "--", "sh", "-c", "echo $TF_CONFIG")
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	var workers []string
	for i, task := range []string{"worker:0", "worker:1"} {
		lines := linesOf(stdout, task)
		require.Len(t, lines, 1, "%s's output, prefixed, on stdout:\n%s", task, stdout)
		var c localTFConfig
		require.NoError(t, json.Unmarshal([]byte(lines[0]), &c), lines[0])
		require.Equal(t, "worker", c.Task.Type)
		require.Equal(t, i, c.Task.Index)
		require.Len(t, c.Cluster["worker"], 2)
		if workers == nil {
			workers = c.Cluster["worker"]
		}
		require.Equal(t, workers, c.Cluster["worker"], "both tasks see the same cluster")
	}
	require.Contains(t, stdout, "local FINISHED SUCCEEDED: all 2 tasks succeeded\n")
	require.NotContains(t, stderr, "note:", "no YARN-only flag was set")
}

func TestRunLocalFailureExitsOne(t *testing.T) {
	noCluster(t)
	stdout, stderr, code := runCLI(t, "run", "--local", "--chief", "1c", "--worker", "1x1c", "--", "sh", "-c", "echo oops >&2; exit 3")
	require.Equal(t, exitJobFailed, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	last := stderr[strings.LastIndex(strings.TrimSuffix(stderr, "\n"), "\n")+1:]
	require.Regexp(t, `^tfyarn: local ended FAILED: (chief|worker):0 failed: exit code 3; last stderr of (chief|worker):0: oops`, last)
	require.Contains(t, stdout, "local FINISHED FAILED: ")
}

func TestRunLocalJSON(t *testing.T) {
	noCluster(t)
	stdout, stderr, code := runCLI(t, "run", "--local", "--output", "json", "--chief", "1c", "--worker", "1c", "--ps", "1c",
		"--", "sh", "-c", `echo "hello from $TFYARN_TASK"; case $TFYARN_TASK_TYPE in ps) exec sleep 30 ;; esac`)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Contains(t, stderr, "[chief:0] hello from chief:0", "with JSON, the tasks' output goes to stderr")

	var raw map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &raw), "stdout is one JSON document: %s", stdout)
	for _, k := range []string{"app_id", "final_status", "state", "diagnostics", "tracking_url", "uploaded_bytes", "tasks"} {
		require.Contains(t, raw, k)
	}
	var res struct {
		AppID         string `json:"app_id"`
		FinalStatus   string `json:"final_status"`
		State         string `json:"state"`
		Diagnostics   string `json:"diagnostics"`
		UploadedBytes int64  `json:"uploaded_bytes"`
		Tasks         []struct {
			Task     string `json:"task"`
			Type     string `json:"type"`
			Index    int    `json:"index"`
			State    string `json:"state"`
			Host     string `json:"host"`
			Port     int    `json:"port"`
			ExitCode *int   `json:"exit_code"`
		} `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	require.Equal(t, "local", res.AppID)
	require.Equal(t, "SUCCEEDED", res.FinalStatus)
	require.Equal(t, "FINISHED", res.State)
	require.Zero(t, res.UploadedBytes)
	require.Contains(t, res.Diagnostics, "chief:0 succeeded")
	require.Len(t, res.Tasks, 3)
	// The worker may end on its own or be stopped once the chief succeeded.
	want := map[string][]string{"chief:0": {"succeeded"}, "worker:0": {"succeeded", "stopped"}, "ps:0": {"stopped"}}
	for _, tr := range res.Tasks {
		require.Contains(t, want[tr.Task], tr.State, tr.Task)
		require.Equal(t, tr.Task, tr.Type+":0")
		require.Zero(t, tr.Index)
		require.NotEmpty(t, tr.Host, tr.Task)
		require.NotZero(t, tr.Port, tr.Task)
		require.NotNil(t, tr.ExitCode, tr.Task)
		if tr.State == "succeeded" {
			require.Zero(t, *tr.ExitCode, tr.Task)
		}
	}
}

func TestRunLocalScriptForm(t *testing.T) {
	noCluster(t)
	// A shell script named .py, run by --python sh: the script form
	// without needing Python.
	script := filepath.Join(t.TempDir(), "train.py")
	require.NoError(t, os.WriteFile(script, []byte(`echo "args $* in $TFYARN_TASK, $GREETING"`+"\n"), 0o644))
	stdout, stderr, code := runCLI(t, "run", "--local", "--worker", "1c", "--python", "sh", "--setenv", "GREETING=hi",
		script, "--", "--job_name={job_name}", "--epochs", "3")
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Equal(t, []string{"args --job_name=worker --epochs 3 in worker:0, hi"}, linesOf(stdout, "worker:0"))
	require.Contains(t, stdout, "local FINISHED SUCCEEDED: worker:0 succeeded", "a script gets TensorFlow's rule")
}

func TestRunLocalIgnoresYARNOnlyFlags(t *testing.T) {
	noCluster(t)
	stdout, stderr, code := runCLI(t, "--timeout", "3s", "run", "--local", "--queue", "ml-gpu", "--am-memory", "1g",
		"--node-label", "gpu", "--tag", "x", "--worker", "1c", "--", "true")
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	require.Equal(t, 1, strings.Count(stderr, "note:"), stderr)
	require.Contains(t, stderr, "tfyarn: note: --local ignores --queue, --tag, --am-memory, --node-label, --timeout (YARN only)\n")
}

func TestRunLocalUsageErrorsStartNothing(t *testing.T) {
	noCluster(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--worker", "3x1q", "--", "touch", "STARTED"}, `worker spec "3x1q": bad vcores "1q"`},
		{[]string{"--ps", "1c", "--", "touch", "STARTED"}, "the job has no chief and no worker"},
		{[]string{"--worker", "1c", "--success", "most", "--", "touch", "STARTED"}, `--success: unknown success rule "most"; expected chief or all`},
		{[]string{"--worker", "1c", "no-such-script.py"}, "script no-such-script.py: no such file or directory"},
		{[]string{"--worker", "1c", "--output", "xml", "--", "touch", "STARTED"}, `--output "xml": expected table, json or events`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			started := filepath.Join(t.TempDir(), "STARTED")
			args := append([]string{"run", "--local"}, tc.args...)
			for i, a := range args {
				if a == "STARTED" {
					args[i] = started
				}
			}
			stdout, stderr, code := runCLI(t, args...)
			require.Equal(t, exitUsage, code, stderr)
			require.Empty(t, stdout)
			require.Contains(t, stderr, tc.want)
			require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			require.NoFileExists(t, started, "no task ran")
		})
	}
}

func TestRunLocalInterruptKills(t *testing.T) {
	noCluster(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"tfyarn", "run", "--local", "--output", "json", "--worker", "2x1c", "--", "sh", "-c", "exec sleep 30"}, &out, &errb)
	}()
	time.Sleep(time.Second) // Ctrl-C once the tasks run
	cancel()
	select {
	case code := <-done:
		require.Equal(t, exitJobFailed, code, errb.String())
	case <-time.After(20 * time.Second):
		t.Fatal("the local run did not end after its context was cancelled")
	}
	var res struct {
		FinalStatus string `json:"final_status"`
		State       string `json:"state"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &res), out.String())
	require.Equal(t, "KILLED", res.FinalStatus)
	require.Equal(t, "KILLED", res.State)
}

// TestRunLocalImportsTfyarn: run --local's tasks import tfyarn's Python package with the system's
// python3, from the run's own temporary copy (not the working directory).
func TestRunLocalImportsTfyarn(t *testing.T) {
	noCluster(t)
	dir := t.TempDir()
	t.Chdir(dir)
	stdout, stderr, code := runCLI(t, "run", "--local", "--worker", "2x1c", "--", "python3", "-c", "import tfyarn; print(tfyarn.__file__)")
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for _, task := range []string{"worker:0", "worker:1"} {
		lines := linesOf(stdout, task)
		require.Len(t, lines, 1, stdout)
		require.Regexp(t, `/tfyarn-python-sdk-\d+/tfyarn/__init__\.py$`, lines[0])
		_, err := os.Stat(lines[0])
		require.True(t, os.IsNotExist(err), "the copy is removed after the run")
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing written into the working directory")
}

// TestRunLocalResultFiles: with --output json, run --local leaves each task's result file in a
// directory of its own (under TMPDIR, 0700) that outlives the run, each file 0600 whatever the
// program's umask, names them in result_files, and leaves the directory to the caller.
func TestRunLocalResultFiles(t *testing.T) {
	noCluster(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	stdout, stderr, code := runCLI(t, "run", "--local", "--worker", "2x1c", "--output", "json", "--", "sh", "-c", `umask 022; [ "$TFYARN_TASK_INDEX" = 1 ] || echo "from $TFYARN_TASK" > "$TFYARN_RESULT_FILE"`)
	require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	var res struct {
		ResultFiles map[string]string `json:"result_files"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), stdout)
	require.Len(t, res.ResultFiles, 1, "worker:1 wrote none")
	path := res.ResultFiles["worker:0"]
	require.True(t, strings.HasPrefix(path, filepath.Join(tmp, "tfyarn-local-results-")), path)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "from worker:0\n", string(got))
	// The shell wrote it as its umask says (0644 here); another user of TMPDIR reads neither.
	dir, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	require.Equal(t, os.ModeDir|0o700, dir.Mode(), "the run's result directory")
	file, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), file.Mode(), "the result file")
	doc := strings.Join(strings.Fields(clustertest.DocSection(t, "## Task results")), " ")
	require.Contains(t, doc, "Only you can read them: the directory is 0700 and each file 0600, whatever your umask.")
}

// TestRunLocalResultFilesSaid: without --output json, run --local says each task's result by its
// size in a line after the job's and removes the run's result directory, which no caller fetches.
func TestRunLocalResultFilesSaid(t *testing.T) {
	noCluster(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	stdout, stderr, code := runCLI(t, "run", "--local", "--worker", "1c", "--", "sh", "-c", `echo r > "$TFYARN_RESULT_FILE"`)
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Equal(t, "local result of worker:0: 2 bytes (removed; --output json keeps it)", lines[len(lines)-1], stdout)
	left, err := filepath.Glob(filepath.Join(tmp, "tfyarn-local-results-*"))
	require.NoError(t, err)
	require.Empty(t, left, "the run's result directory is removed")
	doc := strings.Join(strings.Fields(clustertest.DocSection(t, "## Task results")), " ")
	require.Contains(t, doc, "in a directory of the run's own under `TMPDIR`. `--output json` and `--output events` name them in `result_files`, by task, and leave the directory to the caller, who removes it")
	require.Contains(t, doc, "The table output says each result's size in one line per task after the job's, and removes the directory as the run ends.")
}
