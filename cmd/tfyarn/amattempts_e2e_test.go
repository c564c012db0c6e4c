//go:build e2e

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// A task that fails while no ApplicationMaster watches it (the AM was
// killed, its next attempt not started yet) is the program's failure:
// the next attempt cannot adopt the cluster and starts it again, but YARN
// hands it the failed container's end, and the restart counts toward
// --max-restarts like any other, whose budget holds across attempts. On
// the plain cluster (it allows two AM attempts):
//
//	go test -tags e2e -run E2EAMAttemptUnwatchedFailure ./cmd/tfyarn/
func TestE2EAMAttemptUnwatchedFailure(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	// Each task's runs are counted in a file: the first N sleep, a later
	// one (a restart no rule allows) ends at once, so that a job that
	// wrongly restarts ends quickly, SUCCEEDED, instead of running on.
	sleepsFirst := func(n int) string {
		return `m=$TFYARN_FAULT_DIR/$TFYARN_TASK; echo run >> $m; [ $(wc -l < $m) -gt ` + strconv.Itoa(n) + ` ] || exec sleep 300`
	}

	// kill -9 of the AM, then at once of worker:1's launcher and program:
	// its container is over before attempt 2 registers.
	killAMThenWorker := func(t *testing.T, j *faultJob) time.Time {
		waitSavedContainers(t, c, j.appID, j.containerOf(t, "worker:0"), j.containerOf(t, "worker:1"))
		waitRMSeesRunning(t, c, j.containerOf(t, "worker:0"), j.containerOf(t, "worker:1"))
		am, _ := findAM(j.appID)
		require.NotZero(t, am, "no ApplicationMaster process for %s", j.appID)
		launcher, prog := findLauncher(j.appID, "worker:1"), programPID(t, j.appID, "worker:1")
		require.NotZero(t, launcher, "no launcher of worker:1")
		fault := time.Now()
		require.NoError(t, syscall.Kill(am, syscall.SIGKILL))
		time.Sleep(80 * time.Millisecond)
		require.NoError(t, syscall.Kill(launcher, syscall.SIGKILL))
		_ = syscall.Kill(prog, syscall.SIGKILL)
		return fault
	}

	t.Run("without --max-restarts the job fails", func(t *testing.T) {
		t.Parallel()
		j := startFaultJob(t, c, bin, "--am-attempts", "2", "--worker", "2x1c,256m", "--", "sh", "-c", sleepsFirst(1))
		j.waitRegistered(t, "worker:0")
		j.waitRegistered(t, "worker:1")
		failed := j.containerOf(t, "worker:1")
		fault := killAMThenWorker(t, j)
		j.requireEnd(t, fault, 2*time.Minute, "FAILED",
			"worker:1 (container "+failed+" on ", "failed while no ApplicationMaster watched it (attempt 1 had ended): exit code 137 (SIGKILL)")
		require.NotContains(t, j.result.Diagnostics, "not the program's fault")
		require.Equal(t, 2, j.result.AMAttempts)
	})

	t.Run("--max-restarts 1 used by attempt 1: the job fails", func(t *testing.T) {
		t.Parallel()
		j := startFaultJob(t, c, bin, "--am-attempts", "2", "--max-restarts", "1", "--worker", "2x1c,256m", "--", "sh", "-c", sleepsFirst(2))
		j.waitRegistered(t, "worker:1")
		// Attempt 1 restarts the cluster once (counted) after worker:1's
		// program is killed...
		first := j.containerOf(t, "worker:1")
		pid := programPID(t, j.appID, "worker:1")
		killed := time.Now()
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		j.waitLineAfter(t, regexp.MustCompile(regexp.QuoteMeta(j.appID+" worker:0 registered at ")), killed, time.Minute)
		j.waitLineAfter(t, regexp.MustCompile(regexp.QuoteMeta(j.appID+" worker:1 registered at ")), killed, time.Minute)
		require.NotEqual(t, first, j.containerOf(t, "worker:1"), "restarted in a new container")
		// ...then the same failure while no AM watches must fail the job.
		again := j.containerOf(t, "worker:1")
		fault := killAMThenWorker(t, j)
		j.requireEnd(t, fault, 2*time.Minute, "FAILED",
			"worker:1 (container "+again+" on ", "failed while no ApplicationMaster watched it (attempt 1 had ended): exit code 137 (SIGKILL)",
			"restart 1 after worker:1 (container "+first+" on ")
		// Attempt 1's restart was carried over: its cause is in attempt 2's
		// diagnostics (above), and its budget failed the job. (The result's
		// restart count is the last status page run read, which may be
		// attempt 1's or none when attempt 2 ends at once.)
	})
}

// kill -9 of the ApplicationMaster with --am-attempts 2, attempt 1's port taken at once: attempt
// 2 adopts both tasks, listens elsewhere and calls their launchers on their control ports, which
// register there again (no launcher reads HDFS); the job SUCCEEDS, each program ran once. The
// fault suite's am-killed-with-am-attempts-2 case, alone on the plain cluster:
//
//	go test -tags e2e -run E2EAMAttemptAdoptsAfterTheAMIsKilled ./cmd/tfyarn/
func TestE2EAMAttemptAdoptsAfterTheAMIsKilled(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	fc := amKilledWithAttempts()
	j := startFaultJob(t, c, bin, fc.args...)
	fault := fc.inject(t, c, j)
	r := fc.check(t, c, j, fault)
	t.Logf("%s: %s", fc.name, r.Outcome)
}

// The same on the Kerberized cluster, with a keytab (without one the AM cannot write HDFS, so
// there is no table to adopt from): the launchers hold only delegation tokens, which never let
// them read the table, and need not: attempt 2 calls them.
//
//	go test -tags e2e -run E2EAMAttemptAdoptsUnderKerberos ./cmd/tfyarn/
func TestE2EAMAttemptAdoptsUnderKerberos(t *testing.T) {
	c := clustertest.RequireKerberos(t)
	bin := clustertest.BuildTfyarn(t)
	k := c.Kerberos
	// The checks run `tfyarn status` in this process: as alice, by her ticket.
	t.Setenv("KRB5_CONFIG", k.Krb5Config)
	t.Setenv("KRB5CCNAME", "FILE:"+k.CCache)
	fc := amKilledWithAttemptsOn(append([]string{"--principal", k.Principal, "--keytab", k.Keytab}, taskEnv(c)...))
	j := startFaultJob(t, c, bin, fc.args...)
	fault := fc.inject(t, c, j)
	r := fc.check(t, c, j, fault)
	t.Logf("%s: %s", fc.name, r.Outcome)
}

// waitSavedContainers waits until appID's AM has saved a task table naming
// every one of containers (a next attempt adopts from it).
func waitSavedContainers(t *testing.T, c *clustertest.Cluster, appID string, containers ...string) {
	t.Helper()
	ctx, fs, user := connectHDFS(t, c)
	p := amattempt.Path(hdfs.StagingDir(user, appID))
	var data []byte
	require.Eventually(t, func() bool {
		f, err := fs.Open(ctx, p)
		if err != nil {
			return false
		}
		defer f.Close()
		data = make([]byte, f.Size())
		if _, err := f.ReadAt(data, 0); err != nil && len(data) > 0 {
			return false
		}
		for _, id := range containers {
			if !bytes.Contains(data, []byte(`"`+id+`"`)) {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond, "the AM never saved %s naming %v: %s", p, containers, data)
}

// findLauncher is the pid of task's launcher (./tfyarn task) of appID, 0 if none.
func findLauncher(appID, task string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if !bytes.HasPrefix(cmdline, []byte("./tfyarn\x00task\x00")) {
			continue
		}
		environ, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		vars := "\x00" + string(environ)
		if strings.Contains(vars, "\x00TFYARN_TASK="+task+"\x00") && strings.Contains(vars, "\x00TFYARN_APP_ID="+appID+"\x00") {
			return pid
		}
	}
	return 0
}

// The scheduler preempts the ApplicationMaster's container (the README's
// failure table): with the default --am-attempts 1 the job FAILS with
// YARN's diagnostics (exit status -102); with --am-attempts 2 YARN starts
// attempt 2, which starts the tasks again (the preempted AM stopped them:
// to an AM a preemption's SIGTERM is a kill's), and the job SUCCEEDS.
//
//	go test -tags e2e -run E2EAMPreempted ./cmd/tfyarn/
func TestE2EAMPreempted(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	preemptAM := func(t *testing.T, j *faultJob) time.Time {
		j.waitRegistered(t, "worker:0")
		am := "container_" + strings.TrimPrefix(j.appID, "application_") + "_01_000001"
		fault := time.Now()
		require.Contains(t, c.Control(t, "preempt", am, "500"), "preempted "+am)
		return fault
	}
	t.Run("default: the job fails", func(t *testing.T) {
		t.Parallel()
		j := startFaultJob(t, c, bin, "--worker", "1c,256m", "--", "sleep", "60")
		fault := preemptAM(t, j)
		j.requireEnd(t, fault, time.Minute, "FAILED", "exitCode: -102", "Container preempted by scheduler")
	})
	// The preempted attempt hands the application over (core.Finish.HandOver): it stops no task,
	// does not unregister and keeps the staging directory, so attempt 2 adopts the worker, whose
	// program runs on undisturbed (a restart would run it again with TFYARN_RESTART=1 and count).
	t.Run("--am-attempts 2: the job succeeds", func(t *testing.T) {
		t.Parallel()
		j := startFaultJob(t, c, bin, "--am-attempts", "2", "--worker", "1c,256m", "--", "sh", "-c", `[ "$TFYARN_RESTART" = 0 ] && { `+waitForRelease+`; sleep 20; }; exit 0`)
		j.waitRegistered(t, "worker:0")
		waitTaskTable(t, c, j.appID)
		waitRMSeesRunning(t, c, j.containerOf(t, "worker:0"))
		fault := preemptAM(t, j)
		j.release(t) // the program ends 20 s after the preemption
		j.waitLine(t, regexp.MustCompile(`ApplicationMaster attempt 2 started after attempt 1 ended: .*exitCode: -102`), time.Minute)
		j.requireEnd(t, fault, 2*time.Minute, "SUCCEEDED")
		require.Equal(t, 2, j.result.AMAttempts)
		require.Equal(t, 0, j.result.Restarts, "attempt 2 adopted the worker: its program ran once")
	})
}
