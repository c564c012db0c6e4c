//go:build e2e

package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// checkpointsCLI runs `tfyarn checkpoints ARGS...` against c and returns its stdout.
func checkpointsCLI(t *testing.T, c *clustertest.Cluster, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"checkpoints"}, args...)...)
	cmd.Env = c.Env()
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "tfyarn checkpoints %v: %s", args, stderr)
	return string(out)
}

// TestE2ECheckpointResumes: run --checkpoint on the faults cluster with examples/checkpoint_loop.py
// (plain Python on tfyarn.checkpoint). The task is preempted mid-run (cluster.sh preempt: warned,
// killed 5 s later): it checkpoints on the warning, its launcher saves that to HDFS before the
// kill, and the restarted task, in a new container, resumes at that very step; the restart is
// not counted (--max-restarts 0) and the job SUCCEEDS. A second job of the same name resumes
// from the first one's last checkpoint (saved at its clean exit); `tfyarn checkpoints NAME`
// lists the task's last 2 (--checkpoint-keep's default), and --delete removes them.
func TestE2ECheckpointResumes(t *testing.T) {
	c := clustertest.RequireFaults(t)
	bin := clustertest.BuildTfyarn(t)
	name := "e2e-" + t.Name()
	checkpointsCLI(t, c, bin, name, "--delete") // an earlier run's
	loop := filepath.Join(c.Root, "examples", "checkpoint_loop.py")

	t.Logf("step: the first job, preempted once")
	j := startFaultJob(t, c, bin, "--checkpoint", "--max-restarts", "0", "--worker", "1c,256m", "--",
		"python3", loop, "--steps", "200", "--every", "20", "--step-seconds", "0.05")
	fault := preemptOnceRunning(t, c, j, "worker:0", "worker:0: starting afresh")
	j.requireEnd(t, fault, 2*time.Minute, "SUCCEEDED")
	require.Equal(t, 1, j.result.Restarts)
	require.Regexp(t, `restart 1 after worker:0 \(container \S+ on \S+\) failed: preempted by the scheduler \(exit status -102\).*\(not counted: not the program's fault\)`, j.result.Diagnostics)
	logs := j.stderr() // run follows the tasks' output (--logs)
	m := regexp.MustCompile(`worker:0: checkpointed step (\d+) on the warning\n`).FindStringSubmatch(logs)
	require.NotNil(t, m, "the first run checkpointed on the warning:\n%s", logs)
	require.Regexp(t, `worker:0: resumed at step `+m[1]+` \(checkpoint \d{15}-`+regexp.QuoteMeta(j.appID)+`\)\n`, logs, "the restart resumed at the warning's step")
	require.Contains(t, logs, "worker:0: done at step 200 (total 20100)\n")
	require.Regexp(t, `tfyarn task worker:0: saved checkpoint \S+/worker-0/\d{15}-`+regexp.QuoteMeta(j.appID)+` \(1 files, \d+ bytes\) in `, logs)
	require.Regexp(t, `tfyarn task worker:0: restored checkpoint \d{15}-\S+ from \S+ \(1 files, \d+ bytes\) in `, logs)

	t.Logf("step: a second job of the same name resumes where the first ended")
	j2 := startFaultJob(t, c, bin, "--checkpoint", "--worker", "1c,256m", "--",
		"python3", loop, "--steps", "210", "--every", "50", "--step-seconds", "0.01")
	j2.requireEnd(t, time.Now(), 2*time.Minute, "SUCCEEDED")
	logs2 := j2.stderr()
	require.Regexp(t, `worker:0: resumed at step 200 \(checkpoint \d{15}-`+regexp.QuoteMeta(j.appID)+`\)\n`, logs2)
	require.Contains(t, logs2, "worker:0: done at step 210 (total 22155)\n")

	var listed struct {
		Checkpoints []struct {
			Job, Task, ID, App, Path string
		} `json:"checkpoints"`
	}
	require.NoError(t, json.Unmarshal([]byte(checkpointsCLI(t, c, bin, name, "--output", "json")), &listed))
	require.Len(t, listed.Checkpoints, 2, "the last 2 of worker-0 are kept")
	for i, app := range []string{j.appID, j2.appID} { // the first job's last, the second's
		require.Equal(t, "worker-0", listed.Checkpoints[i].Task)
		require.Equal(t, app, listed.Checkpoints[i].App)
	}

	t.Logf("step: --delete")
	checkpointsCLI(t, c, bin, name, "--delete")
	require.NoError(t, json.Unmarshal([]byte(checkpointsCLI(t, c, bin, name, "--output", "json")), &listed))
	require.Empty(t, listed.Checkpoints)
}
