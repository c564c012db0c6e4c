//go:build e2e

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/jobreport"
)

// The fault-injection suite: real faults on the real cluster (its own, so that stopping a
// NodeManager kills no other test's containers), each case asserting the final status, the
// diagnostics naming the cause, a bounded time from the fault to the end (or the recovery), and
// that nothing is left behind (no container process, no staging directory, no running
// application). Programs are trivial (sleep): what is tested is tfyarn's and YARN's handling.
// Every job is submitted first and the faults injected while they all run, so the suite takes
// about as long as its slowest case, plus the NodeManager cases, which run alone (but the gpu
// node's, which runs beside the others).
// With TFYARN_FAULTS_RESULTS=FILE (make faults) it writes the results table there.
//
//	make faults
//	go test -tags e2e -count=1 -run E2EFaults ./cmd/tfyarn/
func TestE2EFaults(t *testing.T) {
	c := clustertest.RequireFaults(t)
	require.Equal(t, "4", c.Facts["nodemanagers"], "the faults cluster is an older one; stop it: TC_DIR=%s testcluster/cluster.sh down", c.Dir)
	bin := clustertest.BuildTfyarn(t)
	t.Run("am-attempts-over-the-cap", func(t *testing.T) {
		// The client's yarn-site says yarn.resourcemanager.am.max-attempts=2.
		user := c.User(t, "tfyarn-e2e-"+randomHex(t))
		stdout, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + user}, "run", "--am-attempts", "3", "--worker", "1c,256m", "--", "true")
		require.Equal(t, exitUsage, code, stderr)
		require.Empty(t, stdout)
		require.Equal(t, "tfyarn: --am-attempts 3: the ResourceManager allows at most 2 (yarn.resourcemanager.am.max-attempts); ask for 2 or fewer\n", stderr)
		requireNothingCreatedFor(t, c, user)
	})
	t.Run("control-refuses-bad-requests", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"nm", "stop", "9"}, "testcluster: nm-stop 9 failed: no NodeManager 9 (the cluster has 4)"},
			{[]string{"nm", "start", "0"}, "testcluster: nm-start 0 failed: NodeManager 0 is running"},
			{[]string{"preempt", "container_1_0001_01_000001"}, "testcluster: preempt container_1_0001_01_000001 failed: no live container container_1_0001_01_000001 in the scheduler"},
		} {
			cmd := exec.Command(filepath.Join(c.Root, "testcluster", "cluster.sh"), tc.args...)
			cmd.Env = append(os.Environ(), "TC_DIR="+c.Dir)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "%v: %s", tc.args, out)
			require.Equal(t, tc.want+"\n", string(out))
		}
	})
	var results faultResults
	cases := faultCases()
	jobs := make([]*faultJob, len(cases))
	faults := make([]time.Time, len(cases))
	for i, fc := range cases {
		jobs[i] = startFaultJob(t, c, bin, fc.args...)
	}
	// Meanwhile on the gpu node, which the cases above (queue default) never use: a job of queue
	// ml-gpu, whose every container the label puts there, loses the NodeManager its AM runs on.
	withAM := make(chan struct{})
	go func() {
		defer close(withAM)
		t.Run("nodemanager-lost-with-the-am", func(t *testing.T) {
			r := testFaultNodeManagerLostWithAM(t, c, bin)
			r.Scenario = "nodemanager-lost-with-the-am"
			results.add(r)
		})
	}()
	for i, fc := range cases {
		if !t.Run("fault/"+fc.name, func(t *testing.T) { faults[i] = fc.inject(t, c, jobs[i]) }) {
			jobs[i].abandon()
		}
	}
	for i, fc := range cases {
		if faults[i].IsZero() {
			continue
		}
		t.Run("end/"+fc.name, func(t *testing.T) {
			r := fc.check(t, c, jobs[i], faults[i])
			r.Scenario = fc.name
			results.add(r)
		})
	}
	<-withAM
	// Alone, one after the other: stopping a NodeManager kills whatever runs there.
	t.Run("nodemanager-lost", func(t *testing.T) {
		r := testFaultNodeManagerLost(t, c, bin)
		r.Scenario = "nodemanager-lost"
		results.add(r)
	})
	t.Run("nodemanager-lost-with-am-attempts-2", func(t *testing.T) {
		r := testFaultNodeManagerLostAttempts(t, c, bin)
		r.Scenario = "nodemanager-lost-with-am-attempts-2"
		results.add(r)
	})
	if out := os.Getenv("TFYARN_FAULTS_RESULTS"); out != "" && !t.Failed() {
		require.NoError(t, results.write(out))
	}
}

// faultCase is one scenario: the job (run's arguments), the fault injected once it runs
// (returning when), and what must follow.
type faultCase struct {
	name   string
	args   []string
	inject func(t *testing.T, c *clustertest.Cluster, j *faultJob) time.Time
	check  func(t *testing.T, c *clustertest.Cluster, j *faultJob, fault time.Time) faultResult
}

const (
	// runsOnce counts its runs in a file per task (under TFYARN_FAULT_DIR, see startFaultJob):
	// the first sleeps 20 s (long enough for a new AM attempt to start on a busy machine and
	// find it running), a later one ends at once.
	runsOnce     = `m=$TFYARN_FAULT_DIR/$TFYARN_TASK; echo run >> $m; [ $(wc -l < $m) -gt 1 ] || sleep 20`
	sleepForever = "exec sleep 300"
	// onceForever sleeps "forever" on the first run, 2 s after a restart.
	onceForever = `[ "$TFYARN_RESTART" = 0 ] && exec sleep 300; sleep 2`
	// waitForRelease ends once the test has released the job (faultJob.release) or, failing,
	// after 5 min without it: a program that outlasts the faults injected before its own
	// however long they take.
	waitForRelease = `r=$TFYARN_FAULT_DIR/release; i=0; while [ ! -e $r ] && [ $i -lt 1500 ]; do sleep 0.2; i=$((i+1)); done; [ -e $r ]`
)

func faultCases() []faultCase {
	return []faultCase{
		// A chief, worker or ps whose program is killed (kill -9) fails the job at once: FAILED,
		// the task and its exit code named.
		{"worker-killed", []string{"--worker", "2x1c,256m", "--success", "all", "--", "sh", "-c", sleepForever},
			killTask("worker:1"), failsNaming(30*time.Second, "worker:1 (container ", "failed: exit code 137 (SIGKILL)")},
		{"ps-killed", []string{"--worker", "1c,256m", "--ps", "1c,256m", "--", "sh", "-c", sleepForever},
			killTask("ps:0", "worker:0"), failsNaming(30*time.Second, "ps:0 (container ", "failed: exit code 137 (SIGKILL)")},
		{"chief-killed", []string{"--chief", "1c,256m", "--worker", "1c,256m", "--", "sh", "-c", sleepForever},
			killTask("chief:0", "worker:0"), failsNaming(30*time.Second, "chief:0 (container ", "failed: exit code 137 (SIGKILL)")},
		// With --max-restarts the same kill restarts the TensorFlow cluster: every task gets a new
		// container and TFYARN_RESTART=1; the job SUCCEEDS and its diagnostics name the failure.
		{"worker-killed-with-max-restarts", []string{"--max-restarts", "1", "--worker", "2x1c,256m", "--success", "all", "--", "sh", "-c", onceForever},
			killTask("worker:1"), restartsAfter(regexp.MustCompile(`restart 1 after worker:1 \(container \S+ on \S+\) failed: exit code 137 \(SIGKILL\)`))},
		// A preemption is not the program's fault: without any flag it restarts the cluster,
		// not counted (no --max-restarts needed), and the job SUCCEEDS.
		{"task-preempted", []string{"--worker", "2x1c,256m", "--success", "all", "--", "sh", "-c", onceForever},
			preemptTask("worker:1"), restartsAfter(regexp.MustCompile(`restart 1 after worker:1 \(container \S+ on \S+\) failed: preempted by the scheduler \(exit status -102\).*\(not counted: not the program's fault\)`))},
		// An evaluator is outside the TensorFlow cluster: its death does not end the job, which
		// the chief decides (here: it succeeds 8 s after the fault); the task table tells it.
		{"evaluator-killed", []string{"--chief", "1c,256m", "--evaluator", "1c,256m", "--", "sh", "-c",
			`if [ "$TFYARN_TASK_TYPE" = evaluator ]; then exec sleep 300; fi; while [ ! -e /tmp/tfyarn-fault-$TFYARN_APP_ID ]; do sleep 0.2; done; sleep 8`},
			func(t *testing.T, c *clustertest.Cluster, j *faultJob) time.Time {
				fault := killTask("evaluator:0", "chief:0")(t, c, j)
				require.NoError(t, os.WriteFile("/tmp/tfyarn-fault-"+j.appID, nil, 0o644))
				return fault
			},
			func(t *testing.T, c *clustertest.Cluster, j *faultJob, fault time.Time) faultResult {
				defer os.Remove("/tmp/tfyarn-fault-" + j.appID)
				r := j.requireEnd(t, fault, 40*time.Second, "SUCCEEDED")
				ev := taskNamed(t, j.result, "evaluator:0")
				require.NotNil(t, ev.ExitCode, "the evaluator's end is in the task table: %+v", ev)
				require.EqualValues(t, 137, *ev.ExitCode, "the evaluator's end is in the task table: %+v", ev)
				r.Outcome += "; evaluator:0 ended with exit code 137, the chief finished the job"
				return r
			}},
		amKilledWithAttempts(),
		// With --no-infra-restarts a preemption is a failure like a program's: without
		// --max-restarts the job fails naming the preemption (YARN's exit status -102).
		{"task-preempted-with-no-infra-restarts", []string{"--no-infra-restarts", "--worker", "2x1c,256m", "--success", "all", "--", "sh", "-c", sleepForever},
			preemptTask("worker:1"),
			func(t *testing.T, c *clustertest.Cluster, j *faultJob, fault time.Time) faultResult {
				return j.requireEnd(t, fault, 40*time.Second, "FAILED", "worker:1 (container "+j.containerOf(t, "worker:1"), "preempted by the scheduler (exit status -102)")
			}},
		// The client killed (kill -9) mid-job: the job goes on and succeeds, `tfyarn status`
		// says RUNNING while it runs and SUCCEEDED after, and the AM removes the staging dir.
		// The program waits (at most 5 min) for the test to release it after the kill: with a
		// fixed sleep (20 s) the faults injected before this one once outlasted it, and the
		// client had ended with its job before it could be killed.
		{"client-killed", []string{"--worker", "1c,256m", "--", "sh", "-c", waitForRelease},
			func(t *testing.T, c *clustertest.Cluster, j *faultJob) time.Time {
				j.waitRegistered(t, "worker:0")
				fault := time.Now()
				require.NoError(t, j.cmd.Process.Kill())
				<-j.exited
				require.Equal(t, "RUNNING", statusJSON(t, c, j.appID).State)
				j.release(t)
				return fault
			},
			func(t *testing.T, c *clustertest.Cluster, j *faultJob, fault time.Time) faultResult {
				var v appView
				require.Eventually(t, func() bool {
					v = statusJSON(t, c, j.appID)
					return v.State == "FINISHED"
				}, time.Minute, 250*time.Millisecond, "%s did not finish after its client was killed", j.appID)
				// When the RM saw it finish (this check may run later).
				end := time.UnixMilli(v.FinishTimeMS).Sub(fault)
				require.Equal(t, "SUCCEEDED", v.FinalStatus, "%+v", v)
				requireNoContainerProcess(t, j.appID)
				requireStagingGone(t, c, j.appID)
				return faultResult{Outcome: "SUCCEEDED without its client; status said RUNNING, then SUCCEEDED", End: end}
			}},
		// --timeout: YARN's lifetime timeout kills the application; run and status say why.
		{"lifetime-timeout", []string{"--timeout", "5s", "--worker", "1c,256m", "--", "sh", "-c", sleepForever},
			func(t *testing.T, c *clustertest.Cluster, j *faultJob) time.Time { return j.submitted },
			func(t *testing.T, c *clustertest.Cluster, j *faultJob, fault time.Time) faultResult {
				r := j.requireEnd(t, fault, 40*time.Second, "KILLED", "Application is killed by ResourceManager as it has exceeded the lifetime period")
				v := statusJSON(t, c, j.appID)
				require.Equal(t, "KILLED", v.FinalStatus)
				require.Contains(t, v.Diagnostics, "exceeded the lifetime period")
				r.Outcome += " (--timeout 5s; time counted from submission)"
				return r
			}},
	}
}

// kill -9 of the ApplicationMaster with --am-attempts 2: YARN starts attempt 2, which adopts
// the tasks still running: every program runs once, undisturbed, in its first container; the
// job SUCCEEDS, run says why attempt 1 ended, JSON counts 2 attempts. Right after the kill the
// test takes attempt 1's rendezvous port, as another process on the node would (or as a node
// elsewhere would have it), so attempt 2 listens elsewhere: it calls the launchers on their
// control ports with its address, and they register there again and report their exits to it.
func amKilledWithAttempts() faultCase {
	return amKilledWithAttemptsOn(nil)
}

// amKilledWithAttemptsOn is amKilledWithAttempts with more run arguments (before the tasks').
func amKilledWithAttemptsOn(extra []string) faultCase {
	return amKilledWithPortHeldBy(extra, func(conn net.Conn) { conn.Close() })
}

// amKilledWithPortHeldBy is amKilledWithAttemptsOn with attempt 1's port held by whoever
// answers each connection with answer.
func amKilledWithPortHeldBy(extra []string, answer func(net.Conn)) faultCase {
	var old string         // attempt 1's rendezvous address
	var taken net.Listener // holding its port
	// First runs that outlast the faults injected before (waitForRelease) and then the
	// launchers' search for attempt 2 (25 s after the AM is killed).
	program := strings.Replace(runsOnce, "sleep 20", "{ "+waitForRelease+"; sleep 25; }", 1)
	args := append(append([]string{"--am-attempts", "2", "--worker", "2x1c,256m"}, extra...), "--", "sh", "-c", program)
	return faultCase{"am-killed-with-am-attempts-2", args,
		func(t *testing.T, c *clustertest.Cluster, j *faultJob) time.Time {
			j.waitRegistered(t, "worker:1")
			// Training is under way once the AM has saved its task table, with each launcher's
			// control port, and YARN has seen the containers running.
			var saved *amattempt.State
			require.Eventually(t, func() bool {
				saved = savedState(t, c, j.appID)
				return saved != nil && len(saved.Tasks) == 2
			}, time.Minute, 200*time.Millisecond, "the AM never saved both tasks: %+v", saved)
			for _, task := range saved.Tasks {
				require.NotZero(t, task.Control, "%s's launcher announced its control port, saved with the table", task.Task)
			}
			old = saved.AM
			waitRMSeesRunning(t, c, j.containerOf(t, "worker:0"), j.containerOf(t, "worker:1"))
			pid, _ := findAM(j.appID)
			require.NotZero(t, pid, "no ApplicationMaster process for %s", j.appID)
			fault := time.Now()
			require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
			j.release(t)
			_, port, err := net.SplitHostPort(old)
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				taken, err = net.Listen("tcp", ":"+port)
				return err == nil
			}, 5*time.Second, 10*time.Millisecond, "taking attempt 1's port %s: %v", port, err)
			// Whoever calls gets answered so (by default its connection closed): no AM there.
			go func(ln net.Listener) {
				for {
					conn, err := ln.Accept()
					if err != nil {
						return
					}
					go answer(conn)
				}
			}(taken)
			return fault
		},
		func(t *testing.T, c *clustertest.Cluster, j *faultJob, fault time.Time) faultResult {
			defer taken.Close()
			noticed := j.waitLine(t, regexp.MustCompile(`ApplicationMaster attempt 2 started after attempt 1 ended: .*exitCode: 137`), time.Minute)
			// Recovered: attempt 2's AM runs (the tasks never stopped).
			recovered := j.waitLineAfter(t, regexp.MustCompile("^"+regexp.QuoteMeta(j.appID)+" RUNNING$"), noticed, time.Minute)
			// Attempt 2's log (read while it runs: its container's log goes with it): it could not
			// have attempt 1's address, listens elsewhere, and both launchers found it there.
			var amLog string
			var log []byte
			require.Eventually(t, func() bool {
				if _, amLog = findAM(j.appID); amLog == "" || !strings.Contains(amLog, "_02_") {
					return false
				}
				log, _ = os.ReadFile(amLog)
				return bytes.Contains(log, []byte("worker:0 registered again at ")) && bytes.Contains(log, []byte("worker:1 registered again at ")) &&
					bytes.Contains(log, []byte("told worker:0's launcher (control port ")) && bytes.Contains(log, []byte("told worker:1's launcher (control port "))
			}, time.Minute, 200*time.Millisecond, "attempt 2's log (%s) never said it told both launchers where it runs on their control ports and both registered again:\n%s", amLog, log)
			now := regexp.MustCompile(`rendezvous and status page at (\S+) `).FindSubmatch(log)
			require.NotNil(t, now, "attempt 2's address is in its log:\n%s", log)
			require.NotEqual(t, old, string(now[1]), "attempt 2 listens elsewhere")
			// Attempt 2 tries attempt 1's address only on attempt 1's host: with NodeManagers each
			// on a host of their own (TC_NM_HOSTS=1) YARN may start it on another one.
			oldHost, _, _ := net.SplitHostPort(old)
			nowHost, _, _ := net.SplitHostPort(string(now[1]))
			sameHost := oldHost == nowHost
			if sameHost {
				require.Contains(t, string(log), "the previous attempt's address "+old+" is taken")
			}
			// When the second launcher came back, by attempt 2's clock (the same machine's).
			again := regexp.MustCompile(`(?m)^(\S+ \S+) tfyarn am: worker:\d registered again at .*$`).FindAllSubmatch(log, -1)
			require.Len(t, again, 2, "%s", log)
			back, err := time.ParseInLocation("2006-01-02 15:04:05.000", string(again[1][1]), time.Local)
			require.NoError(t, err)
			t.Logf("attempt 2 at %s (attempt 1 was at %s); %s; %s", now[1], old, again[0][0], again[1][0])
			r := j.requireEnd(t, fault, 90*time.Second, "SUCCEEDED")
			require.Equal(t, 2, j.result.AMAttempts)
			require.Zero(t, j.result.Restarts, "adopted: no restart")
			for _, task := range j.result.Tasks {
				require.Contains(t, task.ContainerID, "_01_", "%s runs in attempt 1's container: adopted", task.Task)
				require.Equal(t, "succeeded", task.State, task.Task)
			}
			requireRanOnce(t, j, "worker:0", "worker:1")
			require.NotContains(t, j.stderr(), "could not report the exit")
			r.Recovery = recovered.Sub(fault)
			where := "attempt 1's port taken, attempt 2 listened at a new address"
			if !sameHost {
				where = "attempt 2 listened on another host"
			}
			r.Outcome += fmt.Sprintf(" in attempt 2, which adopted both tasks (each program ran once, in its first container); %s and both launchers found it there and registered again, %.1fs after the kill; run names attempt 1's end (exitCode: 137)", where, back.Sub(fault).Seconds())
			return r
		}}
}

// savedState is what appID's AM saved for a next attempt, over tfyarn's HDFS client; nil while
// there is nothing (or nothing whole) to read.
func savedState(t *testing.T, c *clustertest.Cluster, appID string) *amattempt.State {
	t.Helper()
	ctx, fs, user := connectHDFS(t, c)
	f, err := fs.Open(ctx, amattempt.Path(hdfs.StagingDir(user, appID)))
	if err != nil {
		return nil
	}
	defer f.Close()
	data := make([]byte, f.Size())
	if _, err := f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	st, err := amattempt.Decode(data)
	if err != nil {
		return nil
	}
	return st
}

// killTask waits until every task of wait has registered, then kills task's program (kill -9).
func killTask(task string, wait ...string) func(t *testing.T, c *clustertest.Cluster, j *faultJob) time.Time {
	return func(t *testing.T, c *clustertest.Cluster, j *faultJob) time.Time {
		for _, w := range append([]string{task}, wait...) {
			j.waitRegistered(t, w)
		}
		pid := programPID(t, j.appID, task)
		fault := time.Now()
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		return fault
	}
}

// preemptTask has the scheduler preempt task's container once it registered.
func preemptTask(task string) func(t *testing.T, c *clustertest.Cluster, j *faultJob) time.Time {
	return func(t *testing.T, c *clustertest.Cluster, j *faultJob) time.Time {
		j.waitRegistered(t, task)
		container := j.containerOf(t, task)
		fault := time.Now()
		require.Contains(t, c.Control(t, "preempt", container, "500"), "preempted "+container)
		return fault
	}
}

// restartsAfter: the cluster restarted (worker:1 registered again, the recovery) and the job
// SUCCEEDED with diagnostics matching cause.
func restartsAfter(cause *regexp.Regexp) func(t *testing.T, c *clustertest.Cluster, j *faultJob, fault time.Time) faultResult {
	return func(t *testing.T, c *clustertest.Cluster, j *faultJob, fault time.Time) faultResult {
		recovered := j.waitLineAfter(t, regexp.MustCompile(regexp.QuoteMeta(j.appID+" worker:1 registered at ")), fault, time.Minute)
		r := j.requireEnd(t, fault, 60*time.Second, "SUCCEEDED")
		require.Regexp(t, cause, j.result.Diagnostics)
		require.Equal(t, 1, j.result.Restarts)
		for _, task := range j.result.Tasks {
			require.Equal(t, "succeeded", task.State, task.Task)
		}
		r.Recovery = recovered.Sub(fault)
		r.Outcome += fmt.Sprintf(" after a cluster restart (restarts: %d): %s", j.result.Restarts, firstLine(cause.FindString(j.result.Diagnostics), 120))
		return r
	}
}

// failsNaming: run exits 1 within limit of the fault, the job FAILED with diagnostics saying
// each of want.
func failsNaming(limit time.Duration, want ...string) func(t *testing.T, c *clustertest.Cluster, j *faultJob, fault time.Time) faultResult {
	return func(t *testing.T, c *clustertest.Cluster, j *faultJob, fault time.Time) faultResult {
		return j.requireEnd(t, fault, limit, "FAILED", want...)
	}
}

// A NodeManager crashes while a task runs on it, the ApplicationMaster elsewhere: the RM
// declares the node LOST when its liveness expires (10 s in the test cluster) and reports the
// task's container lost (-100), which is not the program's fault: the cluster restarts on the
// other nodes, not counted (no flag needed), and the job SUCCEEDS. Its two 31-vcore workers
// cannot share a 32-vcore node, so at least one runs away from the AM's node: that one's node
// is crashed; after the restart the AM's node and the fourth NodeManager take them.
func testFaultNodeManagerLost(t *testing.T, c *clustertest.Cluster, bin string) faultResult {
	j := startFaultJob(t, c, bin, "--worker", "2x31c,256m", "--success", "all", "--", "sh", "-c", onceForever)
	j.waitRegistered(t, "worker:0")
	j.waitRegistered(t, "worker:1")
	pid, _ := findAM(j.appID)
	require.NotZero(t, pid, "no ApplicationMaster process for %s", j.appID)
	amNM := nodeManagerOf(t, pid)
	lost := "worker:0"
	if nodeManagerOf(t, programPID(t, j.appID, lost)) == amNM {
		lost = "worker:1"
	}
	nm := nodeManagerOf(t, programPID(t, j.appID, lost))
	require.NotEqual(t, amNM, nm, "both workers run on the AM's NodeManager")
	lostNode := j.nodeOf(t, lost)
	fault := crashNodeManager(t, c, nm)
	recovered := j.waitLineAfter(t, regexp.MustCompile(regexp.QuoteMeta(j.appID+" "+lost+" registered at ")), fault, time.Minute)
	r := j.requireEnd(t, fault, 60*time.Second, "SUCCEEDED")
	require.Equal(t, 1, j.result.Restarts)
	require.Regexp(t, `restart 1 after `+lost+` \(container \S+ on \S+\) failed: aborted by YARN.*\(exit status -100\).*\(not counted: not the program's fault\)`, j.result.Diagnostics)
	require.NotEqual(t, lostNode, j.nodeOf(t, lost), "%s restarted on another node", lost)
	for _, task := range j.result.Tasks {
		require.Equal(t, "succeeded", task.State, task.Task)
	}
	r.Recovery = recovered.Sub(fault)
	r.Outcome += fmt.Sprintf(" after a cluster restart on the other nodes (restarts: 1, not counted; no flag): %s's node was lost (exit status -100)", lost)
	return r
}

// A NodeManager's process stops (cluster.sh nm freeze: SIGSTOP) with a worker on it, the AM
// elsewhere: it stops heartbeating, so it ends like a lost one (a cluster restart on the other
// nodes, not counted, and the job SUCCEEDS within the same bound). The NodeManager cannot stop its
// containers, yet nothing is left behind on its node by the job's end: the old worker's launcher
// still reaches the AM, which stops it. Thawed, the NodeManager registers again.
func testFaultNodeManagerFrozen(t *testing.T, c *clustertest.Cluster, bin string) faultResult {
	j := startFaultJob(t, c, bin, "--worker", "2x31c,256m", "--success", "all", "--", "sh", "-c", onceForever)
	j.waitRegistered(t, "worker:0")
	j.waitRegistered(t, "worker:1")
	pid, _ := findAM(j.appID)
	require.NotZero(t, pid, "no ApplicationMaster process for %s", j.appID)
	amNM := nodeManagerOf(t, pid)
	lost := "worker:0"
	if nodeManagerOf(t, programPID(t, j.appID, lost)) == amNM {
		lost = "worker:1"
	}
	frozenPID := programPID(t, j.appID, lost)
	nm := nodeManagerOf(t, frozenPID)
	require.NotEqual(t, amNM, nm, "both workers run on the AM's NodeManager")
	lostNode := j.nodeOf(t, lost)
	fault := time.Now()
	require.Contains(t, c.Control(t, "nm", "freeze", nm), "froze NodeManager "+nm)
	thawed := false
	t.Cleanup(func() {
		if !thawed {
			c.Control(t, "nm", "thaw", nm)
		}
	})
	recovered := j.waitLineAfter(t, regexp.MustCompile(regexp.QuoteMeta(j.appID+" "+lost+" registered at ")), fault, time.Minute)
	select {
	case <-j.exited:
	case <-time.After(time.Until(fault.Add(60 * time.Second))):
	}
	// Still frozen: the old program is gone all the same.
	requireNoContainerProcess(t, j.appID)
	require.Error(t, syscall.Kill(frozenPID, 0), "%s's first program (pid %d) outlived the job on the frozen node", lost, frozenPID)
	require.Contains(t, c.Control(t, "nm", "thaw", nm), "thawed NodeManager "+nm)
	thawed = true
	r := j.requireEnd(t, fault, 60*time.Second, "SUCCEEDED")
	require.Equal(t, 1, j.result.Restarts)
	require.Regexp(t, `restart 1 after `+lost+` \(container \S+ on \S+\) failed: aborted by YARN.*\(exit status -100\).*\(not counted: not the program's fault\)`, j.result.Diagnostics)
	require.NotEqual(t, lostNode, j.nodeOf(t, lost), "%s restarted on another node", lost)
	r.Recovery = recovered.Sub(fault)
	r.Outcome += fmt.Sprintf(" after a cluster restart on the other nodes (restarts: 1, not counted; no flag): %s's NodeManager was frozen (SIGSTOP), its node LOST (exit status -100); the old program was gone by the job's end", lost)
	return r
}

// A NodeManager crashes while the job's ApplicationMaster (and maybe tasks) run on it: without
// --am-attempts the job fails naming the lost node. The node then comes back. The job is queue
// ml-gpu's: the gpu node runs all of it, and no other case's container.
func testFaultNodeManagerLostWithAM(t *testing.T, c *clustertest.Cluster, bin string) faultResult {
	j := startFaultJob(t, c, bin, "--queue", "ml-gpu", "--worker", "2x1c,256m", "--", "sh", "-c", sleepForever)
	j.waitRegistered(t, "worker:1")
	for _, task := range []string{"worker:0", "worker:1"} {
		require.Equal(t, c.Facts["nm1"], j.nodeOf(t, task), "%s runs on the gpu node", task)
	}
	pid, _ := findAM(j.appID)
	require.NotZero(t, pid, "no ApplicationMaster process for %s", j.appID)
	require.Equal(t, "1", nodeManagerOf(t, pid), "the AM runs on the gpu node (NodeManager 1)")
	fault := crashAMNode(t, c, j)
	r := j.requireEnd(t, fault, 40*time.Second, "FAILED", "exitCode: -100", "Container released on a *lost* node")
	r.Outcome += " (the AM's node)"
	return r
}

// The same crash with --am-attempts 2: YARN starts attempt 2 on another node, which adopts the
// tasks that survived (or, when one ran on the lost node, starts them all again), and the job
// SUCCEEDS.
func testFaultNodeManagerLostAttempts(t *testing.T, c *clustertest.Cluster, bin string) faultResult {
	j := startFaultJob(t, c, bin, "--am-attempts", "2", "--worker", "2x1c,256m", "--", "sh", "-c", runsOnce)
	j.waitRegistered(t, "worker:1")
	waitTaskTable(t, c, j.appID)
	waitRMSeesRunning(t, c, j.containerOf(t, "worker:0"), j.containerOf(t, "worker:1"))
	fault := crashAMNode(t, c, j)
	noticed := j.waitLine(t, regexp.MustCompile(`ApplicationMaster attempt 2 started after attempt 1 ended: .*exitCode: -100.*lost`), time.Minute)
	recovered := j.waitLineAfter(t, regexp.MustCompile(regexp.QuoteMeta(j.appID+" worker:1 registered at ")), noticed, time.Minute)
	r := j.requireEnd(t, fault, 90*time.Second, "SUCCEEDED")
	require.Equal(t, 2, j.result.AMAttempts)
	r.Recovery = recovered.Sub(fault)
	adopted := true
	for _, task := range j.result.Tasks {
		adopted = adopted && strings.Contains(task.ContainerID, "_01_")
	}
	how := "its tasks started again, a restart: one was on the lost node"
	if adopted {
		how = "it adopted the tasks, which ran on another node"
		requireRanOnce(t, j, "worker:0", "worker:1")
		require.Zero(t, j.result.Restarts)
	} else {
		require.Equal(t, 1, j.result.Restarts)
		require.Contains(t, j.result.Diagnostics, "restart 1 after ApplicationMaster attempt 1 ended and its tasks could not be adopted")
	}
	r.Outcome += " in attempt 2 on another node (" + how + "); run names attempt 1's end (exitCode: -100, lost node)"
	return r
}

// A container runs in its NodeManager's local directory: tfyarn-localDir-nm-I_0 (MiniYARNCluster's
// NodeManagers) or DIR/data/nm-I/local (one process per NodeManager, TC_NM_HOSTS=1).
var nmDir = regexp.MustCompile(`(?:-localDir-nm-|/data/nm-)(\d+)[_/]`)

// crashAMNode crashes (cluster.sh nm stop) the NodeManager running j's ApplicationMaster and
// starts it again when the test ends; it returns when the crash happened.
func crashAMNode(t *testing.T, c *clustertest.Cluster, j *faultJob) time.Time {
	t.Helper()
	pid, _ := findAM(j.appID)
	require.NotZero(t, pid, "no ApplicationMaster process for %s", j.appID)
	return crashNodeManager(t, c, nodeManagerOf(t, pid))
}

// nodeManagerOf is the index of the NodeManager whose container runs process pid.
func nodeManagerOf(t *testing.T, pid int) string {
	t.Helper()
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	require.NoError(t, err)
	m := nmDir.FindStringSubmatch(cwd)
	require.NotNil(t, m, "process %d's directory %s names no NodeManager", pid, cwd)
	return m[1]
}

// crashNodeManager crashes NodeManager nm (cluster.sh nm stop) and starts it again when the
// test ends; it returns when the crash happened.
func crashNodeManager(t *testing.T, c *clustertest.Cluster, nm string) time.Time {
	t.Helper()
	fault := time.Now()
	require.Contains(t, c.Control(t, "nm", "stop", nm), "stopped NodeManager "+nm+" ")
	t.Cleanup(func() { c.Control(t, "nm", "start", nm) })
	return fault
}

// ---- helpers ---------------------------------------------------------------------------------

type faultResult struct {
	Scenario string
	Outcome  string
	End      time.Duration // fault → the job's end as the client saw it
	Recovery time.Duration // fault → the job running again (0: not a recovery)
}

type faultResults struct {
	mu   sync.Mutex
	rows []faultResult
}

func (f *faultResults) add(r faultResult) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows = append(f.rows, r)
}

func (f *faultResults) write(path string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	rows := append([]faultResult(nil), f.rows...)
	sort.Slice(rows, func(i, k int) bool { return rows[i].Scenario < rows[k].Scenario })
	var b strings.Builder
	fmt.Fprintf(&b, "# Fault injection on the test cluster\n\n")
	fmt.Fprintf(&b, "Written by `make faults` (TestE2EFaults in cmd/tfyarn/faults_e2e_test.go) on %s.\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "Real single-machine cluster (MiniYARN, 4 NodeManagers, NM liveness expiry 10 s), trivial programs (sleep).\n")
	fmt.Fprintf(&b, "Times are from the fault to the job's end as `tfyarn run` saw it, and to the recovery where one happens.\n\n")
	fmt.Fprintf(&b, "| scenario | outcome | fault → end | fault → recovery |\n|---|---|---|---|\n")
	for _, r := range rows {
		rec := "—"
		if r.Recovery > 0 {
			rec = r.Recovery.Round(100 * time.Millisecond).String()
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.Scenario, strings.ReplaceAll(r.Outcome, "|", "\\|"), r.End.Round(100*time.Millisecond), rec)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// faultJob is one `tfyarn run --output json` under way, its stderr read line by line.
type faultJob struct {
	t      *testing.T
	c      *clustertest.Cluster
	cmd    *exec.Cmd
	appID  string
	stdout bytes.Buffer

	submitted time.Time
	dir       string // TFYARN_FAULT_DIR of the tasks: what they leave for the test

	mu    sync.Mutex
	lines []string
	seen  []time.Time
	more  chan struct{} // closed and replaced on every new line
	done  chan struct{} // stderr at EOF

	exited   chan struct{} // run exited: exitedAt is set
	exitedAt time.Time
	result   client.Result
}

func startFaultJob(t *testing.T, c *clustertest.Cluster, bin string, args ...string) *faultJob {
	t.Helper()
	return startFaultJobIn(t, c, bin, clustertest.ContainerDir(t), args...) // the tasks write there, as their users
}

// startFaultJobIn is startFaultJob with the tasks' TFYARN_FAULT_DIR given (one a Docker image
// can mount).
func startFaultJobIn(t *testing.T, c *clustertest.Cluster, bin, dir string, args ...string) *faultJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	j := &faultJob{t: t, c: c, more: make(chan struct{}), done: make(chan struct{}), exited: make(chan struct{})}
	j.dir = dir
	t.Logf("step: started tfyarn run %s (fault dir %s, at most 4m)", strings.Join(args, " "), dir)
	j.cmd = exec.CommandContext(ctx, bin, append([]string{"run", "--name", "e2e-" + t.Name(), "--output", "json", "--setenv", "TFYARN_FAULT_DIR=" + j.dir}, args...)...)
	j.cmd.Env = c.Env()
	j.cmd.Stdout = &j.stdout
	stderr, err := j.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, j.cmd.Start())
	go func() {
		<-j.done
		_ = j.cmd.Wait()
		j.exitedAt = time.Now()
		close(j.exited)
	}()
	go func() {
		defer close(j.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			j.mu.Lock()
			j.lines = append(j.lines, sc.Text())
			j.seen = append(j.seen, time.Now())
			close(j.more)
			j.more = make(chan struct{})
			j.mu.Unlock()
		}
	}()
	j.submitted = j.waitLine(t, regexp.MustCompile(`^application_\d+_\d+ submitted`), time.Minute)
	j.appID = appIDIn(j.stderr())
	require.NotEmpty(t, j.appID)
	t.Cleanup(func() {
		select {
		case <-j.exited:
		default:
			// The case stopped early (a failure, or -run left it out).
			j.abandon()
		}
	})
	return j
}

// release lets the job's programs that wait for it (waitForRelease) go on.
func (j *faultJob) release(t *testing.T) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(j.dir, "release"), nil, 0o644))
}

// abandon kills run and the application when the case could not go on.
func (j *faultJob) abandon() {
	_ = j.cmd.Process.Kill()
	if j.appID != "" {
		kill := exec.Command(j.cmd.Path, "kill", j.appID)
		kill.Env = j.c.Env()
		_ = kill.Run()
	}
}

func (j *faultJob) stderr() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return strings.Join(j.lines, "\n")
}

// waitLine waits for a stderr line matching re and returns when it came.
func (j *faultJob) waitLine(t *testing.T, re *regexp.Regexp, limit time.Duration) time.Time {
	t.Helper()
	return j.waitLineAfter(t, re, time.Time{}, limit)
}

// waitLineAfter waits for a line matching re that came after after.
func (j *faultJob) waitLineAfter(t *testing.T, re *regexp.Regexp, after time.Time, limit time.Duration) time.Time {
	t.Helper()
	deadline := time.After(limit)
	next := 0
	for {
		j.mu.Lock()
		for ; next < len(j.lines); next++ {
			if j.seen[next].After(after) && re.MatchString(j.lines[next]) {
				at := j.seen[next]
				j.mu.Unlock()
				return at
			}
		}
		more := j.more
		j.mu.Unlock()
		select {
		case <-more:
		case <-j.done:
			j.mu.Lock()
			n := len(j.lines)
			j.mu.Unlock()
			if next == n {
				t.Fatalf("tfyarn run ended without a line matching %q; stderr:\n%s", re, j.stderr())
			}
		case <-deadline:
			t.Fatalf("no line matching %q within %s; stderr:\n%s", re, limit, j.stderr())
		}
	}
}

func (j *faultJob) waitRegistered(t *testing.T, task string) {
	t.Helper()
	j.waitLine(t, regexp.MustCompile(regexp.QuoteMeta(j.appID+" "+task+" registered at ")), 2*time.Minute)
}

var startedLine = regexp.MustCompile(`^\S+ (\S+) started in (container_\S+) on (\S+) `)

func (j *faultJob) started(t *testing.T, task string) (container, node string) {
	t.Helper()
	for _, l := range strings.Split(j.stderr(), "\n") {
		if m := startedLine.FindStringSubmatch(l); m != nil && m[1] == task {
			container, node = m[2], m[3]
		}
	}
	require.NotEmpty(t, container, "no 'started' line for %s:\n%s", task, j.stderr())
	return container, node
}

func (j *faultJob) containerOf(t *testing.T, task string) string {
	c, _ := j.started(t, task)
	return c
}

func (j *faultJob) nodeOf(t *testing.T, task string) string {
	_, n := j.started(t, task)
	return n
}

// requireEnd waits for run to exit within limit of the fault and checks the final status, that
// the diagnostics say each of want, and that nothing is left behind.
func (j *faultJob) requireEnd(t *testing.T, fault time.Time, limit time.Duration, final string, want ...string) faultResult {
	t.Helper()
	select {
	case <-j.exited:
	case <-time.After(time.Until(fault.Add(limit))):
		select {
		case <-j.exited:
		default:
			_ = j.cmd.Process.Kill()
			t.Fatalf("%s: tfyarn run still running %s after the fault; stderr:\n%s", j.appID, limit, j.stderr())
		}
	}
	end := j.exitedAt.Sub(fault)
	require.LessOrEqual(t, end, limit, "%s: tfyarn run ended %s after the fault", j.appID, end)
	code := j.cmd.ProcessState.ExitCode()
	t.Logf("%s ended %s after the fault (exit %d); stderr:\n%s", j.appID, end.Round(time.Millisecond), code, j.stderr())
	require.NoError(t, json.Unmarshal(j.stdout.Bytes(), &j.result), "stdout: %s", j.stdout.String())
	require.Equal(t, final, j.result.FinalStatus, "diagnostics: %s", j.result.Diagnostics)
	if final == "SUCCEEDED" {
		require.Equal(t, 0, code)
	} else {
		require.Equal(t, exitJobFailed, code)
	}
	for _, w := range want {
		require.Contains(t, j.result.Diagnostics, w)
	}
	requireNoContainerProcess(t, j.appID)
	requireStagingGone(t, j.c, j.appID)
	v := statusJSON(t, j.c, j.appID)
	require.Contains(t, []string{"FINISHED", "FAILED", "KILLED"}, v.State, "the application is not running any more")
	outcome := final
	if final != "SUCCEEDED" {
		outcome += ": " + firstLine(j.result.Diagnostics, 160)
	}
	return faultResult{Outcome: outcome, End: end}
}

// waitTaskTable waits until appID's AM has saved its task table for a next attempt
// (amattempt.FileName in the staging directory).
func waitTaskTable(t *testing.T, c *clustertest.Cluster, appID string) {
	t.Helper()
	ctx, fs, user := connectHDFS(t, c)
	p := amattempt.Path(hdfs.StagingDir(user, appID))
	require.Eventually(t, func() bool {
		f, err := fs.Open(ctx, p)
		if err != nil {
			return false
		}
		defer f.Close()
		return f.Size() > 0 // written and closed
	}, 20*time.Second, 100*time.Millisecond, "the AM never saved %s", p)
}

// waitRMSeesRunning waits until the ResourceManager has seen each container running (a
// NodeManager heartbeat after it started): when an attempt fails, YARN keeps only those and
// releases the ones it still counts as merely acquired.
func waitRMSeesRunning(t *testing.T, c *clustertest.Cluster, containers ...string) {
	t.Helper()
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(filepath.Join(c.Dir, "logs", "cluster.log"))
		if err != nil {
			return false
		}
		for _, id := range containers {
			if !bytes.Contains(data, []byte(id+" Container Transitioned from ACQUIRED to RUNNING")) {
				return false
			}
		}
		return true
	}, 20*time.Second, 100*time.Millisecond, "the ResourceManager never saw %v running", containers)
}

// requireStagingGone: appID's staging directory is gone (what requireNoStaging checks with
// Hadoop's CLI, here over tfyarn's HDFS client: no JVM start per case).
func requireStagingGone(t *testing.T, c *clustertest.Cluster, appID string) {
	t.Helper()
	ctx, fs, user := connectHDFS(t, c)
	base, err := fs.Exists(ctx, hdfs.BaseDir(user))
	require.NoError(t, err)
	require.True(t, base, "%s missing: the check would prove nothing", hdfs.BaseDir(user))
	exists, err := fs.Exists(ctx, hdfs.StagingDir(user, appID))
	require.NoError(t, err)
	require.False(t, exists, "%s is still there", hdfs.StagingDir(user, appID))
}

// requireRanOnce: each task's program (runsOnce) ran exactly once.
func requireRanOnce(t *testing.T, j *faultJob, tasks ...string) {
	t.Helper()
	for _, task := range tasks {
		data, err := os.ReadFile(filepath.Join(j.dir, task))
		require.NoError(t, err)
		require.Equal(t, "run\n", string(data), "%s's program ran once", task)
	}
}

func taskNamed(t *testing.T, r client.Result, task string) jobreport.Task {
	t.Helper()
	for _, tr := range r.Tasks {
		if tr.Task == task {
			return tr
		}
	}
	t.Fatalf("no %s in the task table: %+v", task, r.Tasks)
	return jobreport.Task{}
}

func firstLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// programPID is the pid of task's program (e.g. worker:1) of appID: the
// direct child of its launcher (./tfyarn task). Not any process whose
// environment names the task: YARN's `bash -c ./tfyarn task 1>stdout ...`
// wrapper carries the same variables, and killing it instead of the
// program ends the container while the launcher and program run on. The
// program starts once every task registered: on a loaded machine another
// task's container may still be localizing (a JVM per application and node),
// hence a minute.
func programPID(t *testing.T, appID, task string) int {
	t.Helper()
	var pid int
	require.Eventually(t, func() bool {
		pid = findProgram(appID, task)
		return pid != 0
	}, time.Minute, 50*time.Millisecond, "no program process for %s of %s within a minute", task, appID)
	return pid
}

func findProgram(appID, task string) int {
	launcher := findLauncher(appID, task)
	if launcher == 0 {
		return 0
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || parentPID(pid) != launcher {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if len(cmdline) > 0 && !bytes.HasPrefix(cmdline, []byte("./tfyarn\x00")) {
			return pid
		}
	}
	return 0
}

// parentPID is pid's parent from /proc/PID/stat, 0 if it is gone.
func parentPID(pid int) int {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// connectHDFS connects to c's NameNode as the test's user, for one case's checks
// (closed, and the deadline cancelled, when the test ends). The deadline
// covers the whole case, which may wait minutes for a job between two
// calls (TestE2ESecretEnv read the history 34 s in and met a 30 s one).
func connectHDFS(t *testing.T, c *clustertest.Cluster) (context.Context, *hdfs.FS, string) {
	t.Helper()
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	user := ipc.DefaultUser()
	opts := hdfs.Options{User: user}
	if c.Kerberos != nil {
		// On the Kerberized cluster: as the jobs' user, by her ticket.
		login, err := security.LoginKerberos(ctx, security.KerberosOptions{CCache: c.Kerberos.CCache, Krb5Conf: c.Kerberos.Krb5Config})
		require.NoError(t, err)
		user, _, _ = strings.Cut(c.Kerberos.Principal, "@")
		opts = hdfs.Options{User: user, Kerberos: login}
	}
	fs, err := hdfs.ConnectOptions(ctx, conf, opts)
	require.NoError(t, err)
	t.Cleanup(func() { fs.Close() })
	return ctx, fs, user
}
