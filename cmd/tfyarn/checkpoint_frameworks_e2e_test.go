//go:build e2e && checkpoints

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
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
	j := startFaultJob(t, c, bin, "--checkpoint", "--logs", "all", "--max-restarts", "0", "--worker", "2x1c,1g", "--python", python,
		filepath.Join(c.Root, "examples", "checkpoint_resume.py"), "--",
		"--epochs", "2", "--steps-per-epoch", "40", "--step-seconds", "0.25")
	var container string
	require.Eventually(t, func() bool {
		var out []byte
		out, container = containerStdout(j.appID, "worker:1")
		return strings.Contains(string(out), "worker:1: starting afresh")
	}, 3*time.Minute, 100*time.Millisecond, "worker:1 never started; run's stderr:\n%s", j.stderr())
	time.Sleep(2 * time.Second) // some 8 batches: the warning comes mid-epoch
	fault := time.Now()
	require.Contains(t, c.Control(t, "preempt", container), "preempted "+container)
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
		require.Contains(t, logs, fmt.Sprintf("[%s] %s: resumed at epoch 1 batch %d\n", task, task, b+1), "%s resumed at the next batch", task)
		require.Contains(t, logs, task+": done, final loss ")
	}
}

// TestE2ECheckpointPyTorchKilled: examples/checkpoint_resume_torch.py (DistributedDataParallel on
// tfyarn.checkpoint.torch, torch.distributed.checkpoint) in two worker containers under run
// --checkpoint --max-restarts 1. Once rank 0 checkpointed step 40, worker:1's container is killed
// (its launcher, SIGKILL): the cluster restarts, and both ranks, in new containers, resume from
// the last checkpoint saved whole, and the job SUCCEEDS.
func TestE2ECheckpointPyTorchKilled(t *testing.T) {
	c := clustertest.RequireFaults(t)
	bin := clustertest.BuildTfyarn(t)
	python := frameworkPython(t, c, "pytorch")
	name := "e2e-" + t.Name()
	checkpointsCLI(t, c, bin, name, "--delete")
	j := startFaultJob(t, c, bin, "--checkpoint", "--max-restarts", "1", "--framework", "pytorch", "--worker", "2x1c,2g",
		"--python", python, filepath.Join(c.Root, "examples", "checkpoint_resume_torch.py"), "--",
		"--steps", "300", "--every", "20", "--step-seconds", "0.05")
	// torchrun gives the ranks to the containers as it likes: either may be rank 0.
	saved := regexp.MustCompile(`rank 0: checkpointed step (\d+)\n`)
	var out []byte
	require.Eventually(t, func() bool {
		out0, _ := containerStdout(j.appID, "worker:0")
		out1, _ := containerStdout(j.appID, "worker:1")
		out = append(out0, out1...)
		return regexp.MustCompile(`rank 0: checkpointed step 40\n`).Match(out)
	}, 3*time.Minute, 100*time.Millisecond, "rank 0 never checkpointed step 40; run's stderr:\n%s", j.stderr())
	launcher := findLauncher(j.appID, "worker:1")
	require.NotZero(t, launcher)
	fault := time.Now()
	require.NoError(t, syscall.Kill(launcher, syscall.SIGKILL))
	// The last step rank 0 said it checkpointed: the launcher had taken its copy, and so had
	// finished uploading the one before (it saves one at a time). The kill may cut the last
	// upload short: then the one before is restored, never part of the last.
	last := 0
	for _, m := range saved.FindAllSubmatch(out, -1) {
		last, _ = strconv.Atoi(string(m[1]))
	}
	j.requireEnd(t, fault, 4*time.Minute, "SUCCEEDED")
	require.Equal(t, 1, j.result.Restarts)
	logs := appLogs(t, c, j.appID, 5)
	m := regexp.MustCompile(`rank (\d): resumed at step (\d+)\n`).FindAllStringSubmatch(logs, -1)
	require.Len(t, m, 2, "both ranks resumed:\n%s", logs)
	for _, r := range m {
		step, err := strconv.Atoi(r[2])
		require.NoError(t, err)
		require.GreaterOrEqual(t, step, last-20, "resumed from the last checkpoint saved whole (rank 0 said %d)", last)
		require.Positive(t, step)
		require.Zero(t, step%20, "resumed from a checkpoint's step")
		require.Equal(t, m[0][2], r[2], "both ranks resumed at the same step")
	}
	require.Contains(t, logs, "rank 0: done at step 300\n")
	require.Contains(t, logs, "rank 1: done at step 300\n")
}

// checkpointSizeScript writes SIZE_MB of random bytes into the checkpoint directory, marks it
// complete and times it: until the launcher took its copy, and until it was safe on HDFS; a
// restored task prints what it got back.
const checkpointSizeScript = `
import os, time
import tfyarn.checkpoint as c
d = c.directory()
if c.restored():
    print("restored %d bytes" % os.path.getsize(os.path.join(d, "blob")), flush=True)
    raise SystemExit(0)
chunk = os.urandom(1 << 20)
with open(os.path.join(d, "blob"), "wb") as f:
    for _ in range(int(os.environ["SIZE_MB"])):
        f.write(chunk)
t0 = time.monotonic()
c.mark_complete(timeout=600)
t1 = time.monotonic()
r = c.wait_saved(None, timeout=1200)
t2 = time.monotonic()
print("taken aside in %.3f s, safe on HDFS in %.3f s (%d bytes)" % (t1 - t0, t2 - t0, r["bytes"]), flush=True)
`

// TestE2ECheckpointSizes measures, for checkpoints of 100 MB and 1 GB on the faults cluster,
// the time from the program's mark to the checkpoint safe on HDFS (.tfyarn-saved written), and
// the restore before the next job's program starts; with TFYARN_CHECKPOINT_RESULTS set it
// writes them there (bench/results/checkpoints.md).
func TestE2ECheckpointSizes(t *testing.T) {
	c := clustertest.RequireFaults(t)
	bin := clustertest.BuildTfyarn(t)
	var rows []string
	for _, mb := range []int{100, 1024} {
		name := fmt.Sprintf("e2e-checkpoint-size-%d", mb)
		checkpointsCLI(t, c, bin, name, "--delete")
		args := []string{"--checkpoint", "--name", name, "--setenv", fmt.Sprintf("SIZE_MB=%d", mb), "--worker", "1c,1g", "--", "python3", "-c", checkpointSizeScript}
		j := startFaultJob(t, c, bin, args...)
		j.requireEnd(t, time.Now(), 10*time.Minute, "SUCCEEDED")
		save := regexp.MustCompile(`taken aside in ([0-9.]+) s, safe on HDFS in ([0-9.]+) s \((\d+) bytes\)`).FindStringSubmatch(j.stderr())
		require.NotNil(t, save, j.stderr())
		require.Equal(t, strconv.Itoa(mb<<20), save[3])
		j2 := startFaultJob(t, c, bin, args...)
		j2.requireEnd(t, time.Now(), 10*time.Minute, "SUCCEEDED")
		restore := regexp.MustCompile(`restored checkpoint \S+ from \S+ \(1 files, (\d+) bytes\) in (\S+)\n`).FindStringSubmatch(j2.stderr())
		require.NotNil(t, restore, j2.stderr())
		require.Contains(t, j2.stderr(), fmt.Sprintf("restored %d bytes", mb<<20))
		checkpointsCLI(t, c, bin, name, "--delete")
		rows = append(rows, fmt.Sprintf("| %d MB | %s s | %s s | %s |", mb, save[1], save[2], restore[2]))
		t.Logf("%s", rows[len(rows)-1])
	}
	if out := os.Getenv("TFYARN_CHECKPOINT_RESULTS"); out != "" {
		var b strings.Builder
		b.WriteString("# Checkpoints: time to save and to restore\n\n")
		fmt.Fprintf(&b, "`TestE2ECheckpointSizes` (`make checkpoints`) on the faults test cluster (one machine, %d cores, load %s; HDFS on the same disk).\n", runtime.NumCPU(), loadAvg())
		b.WriteString("A task writes one file of random bytes into `TFYARN_CHECKPOINT_DIR` and marks it complete. *Taken aside* is until the launcher\n")
		b.WriteString("copied the directory and removed the mark (the program may write again); *safe* until `.tfyarn-saved` says it is on HDFS,\n")
		b.WriteString("renamed whole. The launcher looked for the mark every 500 ms here; after a preemption warning it looks every 20 ms.\n")
		b.WriteString("*Restore* is the launcher's own measure in the next job of the same name, before its program starts.\n\n")
		b.WriteString("| checkpoint | taken aside | safe on HDFS | restore |\n|---|---|---|---|\n")
		for _, r := range rows {
			b.WriteString(r + "\n")
		}
		require.NoError(t, os.WriteFile(out, []byte(b.String()), 0o644))
	}
}
