package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

func TestRunRestartFlags(t *testing.T) {
	job, err := parseRun(t, "--worker", "2x1c", "--max-restarts", "2", "--retry-exit-codes", "137, 143", "--", "true")
	require.NoError(t, err)
	require.Equal(t, 2, job.Restarts.Max)
	require.Equal(t, []int{137, 143}, job.Restarts.RetryExitCodes)
	require.False(t, job.Restarts.NoInfraRestarts)

	job, err = parseRun(t, "--worker", "1c", "--", "true")
	require.NoError(t, err)
	require.Equal(t, taskspec.RestartPolicy{}, job.Restarts, "by default no program failure restarts and YARN's exits restart uncounted")

	job, err = parseRun(t, "--worker", "1c", "--no-infra-restarts", "--", "true")
	require.NoError(t, err)
	require.Equal(t, taskspec.RestartPolicy{NoInfraRestarts: true}, job.Restarts)

	_, err = parseRun(t, "--worker", "1c", "--retry-exit-codes", "137", "--", "true")
	require.EqualError(t, err, "--retry-exit-codes 137: give --max-restarts N too (without it a program's failure is never restarted)")
	_, err = parseRun(t, "--worker", "1c", "--max-restarts", "1", "--retry-exit-codes", "137,x", "--", "true")
	require.EqualError(t, err, `--retry-exit-codes 137,x: "x" is not an exit code; give numbers separated by commas, e.g. 137,143`)
}

func TestRunRestartFlagsValidated(t *testing.T) {
	noCluster(t)
	for args, want := range map[string][]string{
		"negative":   {"--max-restarts", "-1"},
		"exit code":  {"--max-restarts", "1", "--retry-exit-codes", "0"},
		"not a bool": {"--no-infra-restarts=maybe"},
	} {
		_, stderr, code := runCLI(t, append(append([]string{"run", "--local", "--worker", "1c"}, want...), "--", "true")...)
		require.Equal(t, exitUsage, code, "%s: %s", args, stderr)
		require.Regexp(t, `^tfyarn: .*(--max-restarts -1 is negative|--retry-exit-codes: 0 is not|invalid boolean value "maybe" for -no-infra-restarts)[^\n]*\n$`, stderr, args)
		require.NotContains(t, stderr, "goroutine", args)
	}
}

func TestRunLocalMaxRestartsJSON(t *testing.T) {
	noCluster(t)
	// The worker fails on the job's first run only; the generic rule (all
	// tasks exit 0) then needs the restart.
	stdout, stderr, code := runCLI(t, "run", "--local", "--output", "json", "--max-restarts", "1", "--worker", "2x1c", "--",
		"sh", "-c", `[ "$TFYARN_RESTART" = 0 ] && [ "$TFYARN_TASK" = worker:1 ] && exit 1; exit 0`)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	var res struct {
		FinalStatus string `json:"final_status"`
		Diagnostics string `json:"diagnostics"`
		Restarts    int    `json:"restarts"`
		Tasks       []struct {
			Task     string `json:"task"`
			Restarts int    `json:"restarts"`
		} `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), stdout)
	require.Equal(t, "SUCCEEDED", res.FinalStatus)
	require.Equal(t, 1, res.Restarts)
	require.Contains(t, res.Diagnostics, "restart 1 after worker:1 failed: exit code 1")
	require.Len(t, res.Tasks, 2)
	for _, tr := range res.Tasks {
		require.Equal(t, 1, tr.Restarts, tr.Task)
	}
}

// TestRunLocalNoRestartFile: a program that fails after writing TFYARN_NO_RESTART_FILE is not
// restarted, restarts left or not, and the diagnostics give its reason (docs/failures.md).
func TestRunLocalNoRestartFile(t *testing.T) {
	noCluster(t)
	stdout, stderr, code := runCLI(t, "run", "--local", "--output", "json", "--max-restarts", "2", "--worker", "2x1c", "--",
		"sh", "-c", `[ "$TFYARN_TASK" = worker:1 ] || exec sleep 30; echo "shard 7 is corrupt: fix the input" > "$TFYARN_NO_RESTART_FILE"; exit 3`)
	require.Equal(t, exitJobFailed, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	var res struct {
		FinalStatus string `json:"final_status"`
		Diagnostics string `json:"diagnostics"`
		Restarts    int    `json:"restarts"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &res), stdout)
	require.Equal(t, "FAILED", res.FinalStatus)
	require.Zero(t, res.Restarts)
	require.Contains(t, res.Diagnostics, "worker:1 failed: exit code 3; it asked not to be restarted: shard 7 is corrupt: fix the input")
	require.Contains(t, stderr, "the program asked not to be restarted: shard 7 is corrupt: fix the input", "the task's launcher says so")
}

func TestRunNodeFlags(t *testing.T) {
	job, err := parseRun(t, "--worker", "1c", "--", "true")
	require.NoError(t, err)
	require.Equal(t, taskspec.DefaultMaxNodeFailures, job.MaxNodeFailures, "the default, 2")
	require.Equal(t, 2, taskspec.DefaultMaxNodeFailures)
	require.Zero(t, job.OOMGrow)
	require.Empty(t, job.ExcludeNodes)

	job, err = parseRun(t, "--worker", "1c", "--max-node-failures", "0", "--exclude-nodes", "nm1, nm2,", "--max-restarts", "1", "--oom-grow", "2", "--", "true")
	require.NoError(t, err)
	require.Equal(t, taskspec.NoNodeExclusion, job.MaxNodeFailures, "0: never exclude a node")
	require.Equal(t, []string{"nm1", "nm2"}, job.ExcludeNodes)
	require.Equal(t, 2.0, job.OOMGrow)

	_, err = parseRun(t, "--worker", "1c", "--max-node-failures", "-1", "--", "true")
	require.EqualError(t, err, "--max-node-failures -1 is negative; give 0 (never exclude a node) or more")
	_, err = parseRun(t, "--worker", "1c", "--oom-grow", "2", "--", "true")
	require.EqualError(t, err, "--oom-grow 2: give --max-restarts N too (a memory kill restarts only as a counted restart)")
}

func TestReportSince(t *testing.T) {
	for in, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "12h": 12 * time.Hour, "90m": 90 * time.Minute} {
		got, err := parseSince(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "0d", "-1h", "week"} {
		_, err := parseSince(bad)
		require.Error(t, err, bad)
	}
	u := appUsage{AppID: "application_1_0001", User: "alice", Queue: "default", State: "FINISHED", GPUHours: 0.5, PreemptedResourceSeconds: map[string]int64{"vcores": 7}}
	require.Equal(t, []string{"application_1_0001", "alice", "default", "FINISHED", "0.500", "-", "0.000", "0.000", "-", "vcores=7", "-"}, u.cells())
}
