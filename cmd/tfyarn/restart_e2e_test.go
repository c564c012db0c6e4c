//go:build e2e

package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// --max-restarts on the real cluster: a worker that fails on the job's
// first run only (TFYARN_RESTART=0), with and without the flag, then Keras'
// BackupAndRestore resuming training after the restart.
//
//	go test -tags e2e -run E2ERestarts ./cmd/tfyarn/
func TestE2ERestarts(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	failOnce := []string{"--chief", "1c,256m", "--worker", "1c,256m", "--",
		"sh", "-c", `echo "run $TFYARN_RESTART"; [ "$TFYARN_TASK" = worker:0 ] && [ "$TFYARN_RESTART" = 0 ] && { echo "bad shard" >&2; exit 1; }; sleep 1; exit 0`}

	// Five jobs of their own, two at a time, the longest first: the two TensorFlow jobs, then the
	// short ones beside the shorter of those.
	clustertest.Subtests(t, 2,
		clustertest.Subtest{Name: "keras resumes", Run: func(t *testing.T) {
			python := tfPython(t, c)
			// The test cluster is one machine: a local directory is storage
			// every task reaches, as HDFS or NFS would be on a real cluster.
			backup := clustertest.ContainerDir(t)
			r, _, code := execTF(t, c, bin, "--name", "e2e-restart-keras", "--max-restarts", "1", "--chief", "1c,1g", "--worker", "1c,1g",
				"--python", python, filepath.Join(c.Root, "examples", "mwms_keras.py"), "--",
				"--epochs", "3", "--steps-per-epoch", "5", "--backup-dir", backup, "--fail-once-after-epoch", "2")
			require.Equal(t, exitOK, code, r.Diagnostics)
			require.Equal(t, "SUCCEEDED", r.FinalStatus)
			require.Equal(t, 1, r.Restarts)
			require.Contains(t, r.Diagnostics, "restart 1 after worker:0")
			logs := appLogs(t, c, r.AppID, 5)
			require.Contains(t, logs, "worker:0: failing after epoch 2 on purpose")
			for _, task := range []string{"chief:0", "worker:0"} {
				require.Contains(t, logs, task+": training from epoch 1 of 3 (restart 0)")
				require.Contains(t, logs, task+": training from epoch 3 of 3 (restart 1)", "%s resumed where the backup left off", task)
			}
		}},
		clustertest.Subtest{Name: "pss worker in place", Run: func(t *testing.T) {
			python := tfPython(t, c)
			// worker:1 fails once the chief wrote its first checkpoint; it
			// comes back in a container on its node, at its old address, while
			// the chief (ClusterCoordinator), the ps and worker:0 train on.
			// Under load the coordinator may still be reconnecting to it when
			// training ends: the chief must still exit 0 (it once aborted in
			// Python's teardown then; see end_process in the example).
			r, _, code := execTF(t, c, bin, "--name", "e2e-restart-pss", "--max-restarts", "1",
				"--chief", "1c,1g", "--worker", "2x1c,1g", "--ps", "1c,1g",
				"--python", python, filepath.Join(c.Root, "examples", "ps_strategy.py"), "--",
				"--model-dir", clustertest.ContainerDir(t), "--epochs", "40", "--steps-per-epoch", "20", "--fail-worker-once")
			require.Equal(t, exitOK, code, r.Diagnostics)
			require.Equal(t, "SUCCEEDED", r.FinalStatus)
			require.Equal(t, 1, r.Restarts)
			require.Contains(t, r.Diagnostics, "restart 1 after worker:1 (container ")
			for _, task := range r.Tasks {
				want := 0
				if task.Task == "worker:1" {
					want = 1
				}
				require.Equal(t, want, task.Restarts, "only worker:1 restarted: %s", task.Task)
			}
			// The AM's two registrations of worker:1, once its log is there in full (a CI check once
			// read it with neither line: the test now waits for them and shows the AM's log if not).
			registered := regexp.MustCompile(`tfyarn am: worker:1 registered at (\S+) \(container (\S+),`)
			var logs string
			var regs [][]string
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
				logs = appLogs(t, c, r.AppID, 6)
				if regs = registered.FindAllStringSubmatch(logs, -1); len(regs) >= 2 || time.Now().After(deadline) {
					break
				}
			}
			require.Contains(t, logs, "worker:1: failing on purpose after the first checkpoint")
			require.Len(t, regs, 2, "worker:1 registered once per container; the AM's log as aggregated:\n%s", amLogOf(logs))
			require.Equal(t, regs[0][1], regs[1][1], "worker:1 came back at its address")
			require.NotEqual(t, regs[0][2], regs[1][2], "in a new container")
			require.Contains(t, logs, "chief: epoch 40 done")
		}},
		clustertest.Subtest{Name: "restarted", Run: func(t *testing.T) {
			stdout, stderr, code := execTfyarn(t, c, bin, nil, append([]string{"run", "--output", "json", "--max-restarts", "1"}, failOnce...)...)
			r := runJSON(t, stdout)
			require.Equal(t, exitOK, code, "%s\n%s", r.Diagnostics, stderr)
			require.Equal(t, "SUCCEEDED", r.FinalStatus)
			require.Equal(t, 1, r.Restarts)
			require.Regexp(t, `^chief:0 succeeded; restart 1 after worker:0 \(container container_\S+ on \S+\) failed: exit code 1`, r.Diagnostics)
			// run tells the restart as it happens, naming the failure, and
			// never shows the failed container as the new attempt's start.
			restarting := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(r.AppID) + ` restarting: restart 1 after worker:0 \(container (\S+) on \S+\) failed: exit code 1$`).FindStringSubmatchIndex(stderr)
			require.NotNil(t, restarting, "no restarting line:\n%s", stderr)
			failed := stderr[restarting[2]:restarting[3]]
			require.NotContains(t, stderr[restarting[1]:], " worker:0 started in "+failed+" ", "after the restart, the failed container is not shown as started:\n%s", stderr)
			for _, m := range regexp.MustCompile(` started in (container_\S+) `).FindAllStringSubmatch(stderr[:restarting[0]], -1) {
				require.NotContains(t, stderr[restarting[1]:], " started in "+m[1]+" ", "a container of the first run shown as started after the restart:\n%s", stderr)
			}
			require.LessOrEqual(t, strings.Count(stderr, " worker:0 started in "+failed+" "), 1, "started at most once (a poll may miss a quick failure):\n%s", stderr)
			require.Less(t, restarting[0], strings.Index(stderr, r.AppID+" FINISHED"), "the restart is told before the end:\n%s", stderr)
			require.Regexp(t, regexp.MustCompile(`(?s)restarting: restart 1 .* worker:0 started in container_\S+ .* worker:0 registered at `), stderr, "then the new attempt starts")
			for _, task := range r.Tasks {
				require.Equal(t, 1, task.Restarts, task.Task)
				require.Equal(t, "succeeded", task.State, task.Task)
			}
			// Four task containers: the first run's two, the restart's two.
			logs := appLogsWithAMLog(t, c, r.AppID, 5)
			require.Equal(t, 2, strings.Count(logs, "run 0\n"), "the first run")
			require.Equal(t, 2, strings.Count(logs, "run 1\n"), "the restart, TFYARN_RESTART=1")
			require.Contains(t, logs, "restarting the cluster (restart 1)", "the AM's log says so")
		}},
		clustertest.Subtest{Name: "not restarted", Run: func(t *testing.T) {
			stdout, _, code := execTfyarn(t, c, bin, nil, append([]string{"run", "--output", "json"}, failOnce...)...)
			r := runJSON(t, stdout)
			require.Equal(t, exitJobFailed, code)
			require.Equal(t, "FAILED", r.FinalStatus)
			require.Zero(t, r.Restarts)
			require.Regexp(t, `^worker:0 \(container \S+ on \S+\) failed: exit code 1; last stderr of worker:0: bad shard$`, r.Diagnostics)
		}},
		clustertest.Subtest{Name: "asked not to restart", Run: func(t *testing.T) {
			// Restarts left, but the program says one cannot help (docs/failures.md).
			stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--output", "json", "--max-restarts", "2", "--worker", "1c,256m", "--",
				"sh", "-c", `echo "run $TFYARN_RESTART"; printf 'shard 7 is corrupt: fix the input\n' > "$TFYARN_NO_RESTART_FILE"; echo "bad shard" >&2; exit 3`)
			r := runJSON(t, stdout)
			require.Equal(t, exitJobFailed, code, stderr)
			require.Equal(t, "FAILED", r.FinalStatus)
			require.Zero(t, r.Restarts)
			require.Regexp(t, `^worker:0 \(container \S+ on \S+\) failed: exit code 3; it asked not to be restarted: shard 7 is corrupt: fix the input; last stderr of worker:0: bad shard$`, r.Diagnostics)
			require.NotContains(t, stderr, "restarting:")
		}},
	)
}

// amLogOf is the ApplicationMaster's part (container ..._000001) of an application's aggregated logs.
func amLogOf(logs string) string {
	i := regexp.MustCompile(`(?m)^Container: container_\S+_01_000001 on `).FindStringIndex(logs)
	if i == nil {
		return "(no section of the AM's container in the logs)"
	}
	rest := logs[i[0]:]
	if j := regexp.MustCompile(`(?m)^Container: `).FindAllStringIndex(rest, 2); len(j) == 2 {
		rest = rest[:j[1][0]]
	}
	return rest
}
