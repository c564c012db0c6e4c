//go:build e2e && checkpoints

package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// The checkpoint tests with real frameworks: longer than make test's budget, so in `make
// checkpoints` (build tag checkpoints) on the faults cluster.

// TestE2ECheckpointKerasPreempted: examples/checkpoint_resume.py (Keras, MultiWorkerMirroredStrategy
// on tfyarn.checkpoint.keras) with two workers under run --checkpoint --max-restarts 0. worker:1 is
// preempted mid-epoch: both workers back up at the same batch on the warning, the chief's backup
// reaches HDFS before the kill, and both restarted workers, in new containers, resume at the next
// batch; the restart is not counted and the job SUCCEEDS.
func TestE2ECheckpointKerasPreempted(t *testing.T) {
	c := clustertest.RequireFaults(t)
	bin := clustertest.BuildTfyarn(t)
	python := tfPython(t, c)
	name := "e2e-" + t.Name()
	checkpointsCLI(t, c, bin, name, "--delete")
	j := startFaultJob(t, c, bin, "--checkpoint", "--max-restarts", "0", "--worker", "2x1c,1g", "--python", python,
		filepath.Join(c.Root, "examples", "checkpoint_resume.py"), "--",
		"--epochs", "2", "--steps-per-epoch", "40", "--step-seconds", "0.25")
	fault := preemptOnceRunning(t, c, j, "worker:1", "worker:1: starting afresh")
	j.requireEnd(t, fault, 4*time.Minute, "SUCCEEDED")
	require.Equal(t, 1, j.result.Restarts)
	require.Contains(t, j.result.Diagnostics, "failed: preempted by the scheduler (exit status -102)")
	logs := j.stderr()
	m := regexp.MustCompile(`\[worker:0\] tfyarn\.checkpoint\.keras: backed up at epoch 1 batch (\d+) on YARN's warning\n`).FindStringSubmatch(logs)
	require.NotNil(t, m, "the chief backed up on the warning:\n%s", logs)
	b, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.Less(t, b, 39, "backed up mid-epoch, not at its end")
	require.Contains(t, logs, fmt.Sprintf("[worker:1] tfyarn.checkpoint.keras: backed up at epoch 1 batch %d on YARN's warning\n", b), "the workers backed up together")
	require.Regexp(t, `\[worker:0\] tfyarn task worker:0: saved checkpoint \S+/worker-0/\d{15}-`+regexp.QuoteMeta(j.appID), logs)
	for _, task := range []string{"worker:0", "worker:1"} {
		require.Contains(t, logs, fmt.Sprintf("%s: resumed at epoch 1 batch %d\n", task, b+1), "%s resumed at the next batch", task)
		require.Contains(t, logs, task+": done, final loss ")
	}
}

// TestE2ECheckpointPyTorchKilled: examples/checkpoint_resume_torch.py (DistributedDataParallel on
// tfyarn.checkpoint.torch, torch.distributed.checkpoint) in two worker containers under run
// --checkpoint --max-restarts 1. Once both ranks checkpointed step 40, worker:1's container is
// killed (its launcher, SIGKILL): the cluster restarts, and both ranks, in new containers, resume
// from the last checkpoint saved (a multiple of 20 from 40 on) and the job SUCCEEDS.
func TestE2ECheckpointPyTorchKilled(t *testing.T) {
	c := clustertest.RequireFaults(t)
	bin := clustertest.BuildTfyarn(t)
	python := frameworkPython(t, c, "pytorch")
	name := "e2e-" + t.Name()
	checkpointsCLI(t, c, bin, name, "--delete")
	j := startFaultJob(t, c, bin, "--checkpoint", "--max-restarts", "1", "--framework", "pytorch", "--worker", "2x1c,1g",
		"--python", python, filepath.Join(c.Root, "examples", "checkpoint_resume_torch.py"), "--",
		"--steps", "300", "--every", "20", "--step-seconds", "0.05")
	require.Eventually(t, func() bool {
		out, _ := containerStdout(j.appID, "worker:1")
		return regexp.MustCompile(`rank 1: checkpointed step 40\n`).Match(out)
	}, 3*time.Minute, 100*time.Millisecond, "rank 1 never checkpointed step 40; run's stderr:\n%s", j.stderr())
	launcher := findLauncher(j.appID, "worker:1")
	require.NotZero(t, launcher)
	fault := time.Now()
	require.NoError(t, syscall.Kill(launcher, syscall.SIGKILL))
	j.requireEnd(t, fault, 4*time.Minute, "SUCCEEDED")
	require.Equal(t, 1, j.result.Restarts)
	logs := j.stderr()
	saved := regexp.MustCompile(`rank 0: checkpointed step (\d+)\n`).FindAllStringSubmatch(logs, -1)
	require.NotEmpty(t, saved)
	m := regexp.MustCompile(`rank (\d): resumed at step (\d+)\n`).FindAllStringSubmatch(logs, -1)
	require.Len(t, m, 2, "both ranks resumed:\n%s", logs)
	for _, r := range m {
		step, err := strconv.Atoi(r[2])
		require.NoError(t, err)
		require.GreaterOrEqual(t, step, 40)
		require.Zero(t, step%20, "resumed from a checkpoint's step")
		require.Equal(t, m[0][2], r[2], "both ranks resumed at the same step")
	}
	require.Contains(t, logs, "rank 0: done at step 300\n")
	require.Contains(t, logs, "rank 1: done at step 300\n")
}
