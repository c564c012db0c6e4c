package localrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

func TestEveryTaskGetsTheFullTFConfig(t *testing.T) {
	// The chief, which decides, waits until both workers have printed:
	// otherwise they may be stopped before they do.
	dir := t.TempDir()
	script := `echo "TF_CONFIG=$TF_CONFIG"; echo "task $TFYARN_TASK" >&2; touch "$DIR/$TFYARN_TASK"
	if [ "$TFYARN_TASK" = chief:0 ]; then
		for i in $(seq 200); do [ -e "$DIR/worker:0" ] && [ -e "$DIR/worker:1" ] && break; sleep 0.05; done
	fi`
	res, out := runLocal(t, context.Background(),
		shJob(script, group(taskspec.Chief, 1), group(taskspec.Worker, 2)),
		Options{Env: append(os.Environ(), "DIR="+dir)})
	require.Equal(t, StatusSucceeded, res.Status)
	require.True(t, strings.HasPrefix(res.Diagnostics, "chief:0 succeeded"), res.Diagnostics)
	require.Len(t, res.Tasks, 3)
	requireFullTFConfig(t, res, out.String())
	require.Contains(t, out.String(), "[worker:1] task worker:1\n", "stderr comes back prefixed too")
	for _, tr := range res.Tasks {
		require.True(t, strings.HasPrefix(tr.Addr, "127.0.0.1:"), tr.Addr)
	}
}

func TestChiefDecidesAndTheRestIsStopped(t *testing.T) {
	script := `case $TFYARN_TASK in
	chief:0) sleep 0.5; exit 0 ;;
	*) exec sleep 60 ;;
	esac`
	start := time.Now()
	res, _ := runLocal(t, context.Background(),
		shJob(script, group(taskspec.Chief, 1), group(taskspec.Worker, 2), group(taskspec.PS, 1), group(taskspec.Evaluator, 1)),
		Options{})
	require.Equal(t, StatusSucceeded, res.Status)
	require.Less(t, time.Since(start), 10*time.Second, "the ps, evaluator and workers were not stopped promptly")
	require.False(t, taskResult(t, res, id(taskspec.Chief, 0)).Stopped)
	for _, other := range []taskspec.TaskID{id(taskspec.Worker, 0), id(taskspec.Worker, 1), id(taskspec.PS, 0), id(taskspec.Evaluator, 0)} {
		tr := taskResult(t, res, other)
		require.True(t, tr.Stopped, "%s", other)
		require.Equal(t, 128+int(syscall.SIGTERM), tr.ExitCode, "%s", other)
	}
}

func TestWorkersFinishingFirstDoNotDecide(t *testing.T) {
	// MultiWorkerMirroredStrategy style: everyone trains and exits 0; the
	// job waits for the chief even when workers are done first.
	script := `case $TFYARN_TASK in
	chief:0) sleep 2; exit 0 ;;
	*) exit 0 ;;
	esac`
	res, _ := runLocal(t, context.Background(), shJob(script, group(taskspec.Chief, 1), group(taskspec.Worker, 2)), Options{})
	require.Equal(t, StatusSucceeded, res.Status)
	for _, tr := range res.Tasks {
		require.Zero(t, tr.ExitCode, "%s", tr.Task)
		require.False(t, tr.Stopped, "%s", tr.Task)
	}
}

func TestWorkersEndingJustAfterTheChiefSucceed(t *testing.T) {
	// MultiWorkerMirroredStrategy style: the workers finish training with
	// the chief but take a moment longer to exit; the ps-less job gives
	// them the worker grace. A TF1-style worker goes on training (with its
	// ps, kept up for it) and ends by itself within the grace as well.
	script := `case $TFYARN_TASK in
	chief:0|worker:0) exit 0 ;;
	worker:*) sleep 1; exit 0 ;;
	*) exec sleep 60 ;;
	esac`
	for _, c := range []struct {
		name   string
		groups []taskspec.TaskGroup
		diag   string
	}{
		{"MWMS", []taskspec.TaskGroup{group(taskspec.Chief, 1), group(taskspec.Worker, 3)}, "chief:0 succeeded"},
		{"TF1", []taskspec.TaskGroup{group(taskspec.Worker, 2), group(taskspec.PS, 1)}, "worker:0 succeeded; stopped ps:0 after it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, _ := runLocal(t, context.Background(), shJob(script, c.groups...), Options{})
			require.Equal(t, StatusSucceeded, res.Status)
			require.Equal(t, c.diag, res.Diagnostics)
			for _, tr := range res.Tasks {
				if tr.Task.Type == taskspec.PS {
					require.True(t, tr.Stopped, "%s", tr.Task)
					continue
				}
				require.Zero(t, tr.ExitCode, "%s", tr.Task)
				require.False(t, tr.Stopped, "%s", tr.Task)
				require.Empty(t, tr.Failure, "%s", tr.Task)
			}
		})
	}
}

func TestWorkerFailureFailsTheJob(t *testing.T) {
	script := `case $TFYARN_TASK in
	worker:1) sleep 0.3; echo "Traceback (most recent call last):" >&2; echo "ValueError: boom" >&2; exit 3 ;;
	*) exec sleep 60 ;;
	esac`
	res, _ := runLocal(t, context.Background(),
		shJob(script, group(taskspec.Chief, 1), group(taskspec.Worker, 2), group(taskspec.PS, 1)), Options{})
	require.Equal(t, StatusFailed, res.Status)
	require.Equal(t, "worker:1 failed: exit code 3; last stderr of worker:1: Traceback (most recent call last): | ValueError: boom", res.Diagnostics,
		"the ApplicationMaster's wording, with the program's last stderr lines")
	w1 := taskResult(t, res, id(taskspec.Worker, 1))
	require.Equal(t, 3, w1.ExitCode)
	require.False(t, w1.Stopped)
	require.Equal(t, []string{"Traceback (most recent call last):", "ValueError: boom"}, w1.StderrTail)
	require.Equal(t, "worker:1 failed: exit code 3: ValueError: boom", w1.Failure, "one line")
	chief := taskResult(t, res, id(taskspec.Chief, 0))
	require.True(t, chief.Stopped, "the chief is stopped once the job failed")
	require.Empty(t, chief.Failure, "a stopped task did not fail")
}

func TestWithoutChiefWorker0DecidesAndPlaceholdersAreFilled(t *testing.T) {
	// TF1 between-graph style (TFMesos/Marathon): no chief, ps never ends.
	// worker:0, which decides, waits until the ps has printed its
	// arguments: otherwise the ps may be stopped before it does.
	dir := t.TempDir()
	script := `echo "args $*"; touch "$DIR/$TFYARN_TASK"
	case $TFYARN_TASK in
	worker:0) for i in $(seq 200); do [ -e "$DIR/ps:0" ] && break; sleep 0.05; done; exit 0 ;;
	worker:1) sleep 30; exit 0 ;;
	*) exec sleep 60 ;;
	esac`
	job := shJob(script, group(taskspec.Worker, 2), group(taskspec.PS, 1))
	job.Args = append(job.Args, "sh", "--ps_hosts={ps_hosts}", "--worker_hosts={worker_hosts}", "--job_name={job_name}", "--task_index={task_index}")
	// worker:1, still "training" (sleep 30), has the worker grace to end;
	// it does not, so it is stopped with the ps when the grace runs out.
	res, out := runLocal(t, context.Background(), job, Options{Env: append(os.Environ(), "DIR="+dir), WorkerGrace: time.Second})
	require.Equal(t, StatusSucceeded, res.Status)
	require.Equal(t, "worker:0 succeeded; stopped ps:0 after it; stopped worker:1 when the 1s worker grace ran out", res.Diagnostics)
	ps := taskResult(t, res, id(taskspec.PS, 0))
	require.True(t, ps.Stopped)
	w1 := taskResult(t, res, id(taskspec.Worker, 1))
	require.True(t, w1.Stopped)
	require.Greater(t, w1.Ended-taskResult(t, res, id(taskspec.Worker, 0)).Ended, 900*time.Millisecond, "worker:1 had its grace")
	w := []string{taskResult(t, res, id(taskspec.Worker, 0)).Addr, taskResult(t, res, id(taskspec.Worker, 1)).Addr}
	want := "[ps:0] args --ps_hosts=" + ps.Addr + " --worker_hosts=" + strings.Join(w, ",") + " --job_name=ps --task_index=0\n"
	require.Contains(t, out.String(), want)
}

func TestCancelKillsEveryProcess(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	// One task ignores SIGTERM: the launcher must SIGKILL it after the
	// grace period. Each program records its pid for the check below.
	script := `echo $$ >> ` + pids + `
	case $TFYARN_TASK in
	ps:0) trap '' TERM; while :; do sleep 0.1; done ;;
	*) exec sleep 60 ;;
	esac`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if b, _ := os.ReadFile(pids); strings.Count(string(b), "\n") == 4 {
				cancel()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	start := time.Now()
	res, _ := runLocal(t, ctx, shJob(script, group(taskspec.Chief, 1), group(taskspec.Worker, 2), group(taskspec.PS, 1)), Options{ProgramStopGrace: time.Second})
	require.Equal(t, StatusKilled, res.Status)
	require.Contains(t, res.Diagnostics, "killed")
	require.Less(t, time.Since(start), 15*time.Second)
	for _, tr := range res.Tasks {
		require.True(t, tr.Stopped, "%s", tr.Task)
	}
	require.Equal(t, 128+int(syscall.SIGKILL), taskResult(t, res, id(taskspec.PS, 0)).ExitCode, "the ps ignored SIGTERM")
	b, err := os.ReadFile(pids)
	require.NoError(t, err)
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		require.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "process %d outlived the run", pid)
		// The program's process group (the sleeps a shell started) is gone
		// too, once init has reaped the orphans the final SIGKILL left.
		require.Eventually(t, func() bool { return errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH) }, 5*time.Second, 20*time.Millisecond,
			"process group %d outlived the run", pid)
	}
}

func TestGenericRuleWaitsForEveryWorker(t *testing.T) {
	script := `case $TFYARN_TASK in
	worker:0) exit 0 ;;
	*) sleep 0.5; exit 0 ;;
	esac`
	res, _ := runLocal(t, context.Background(), shJob(script, group(taskspec.Worker, 2)), Options{})
	require.Equal(t, StatusSucceeded, res.Status)
	require.Equal(t, "all 2 tasks succeeded", res.Diagnostics)
	require.False(t, taskResult(t, res, id(taskspec.Worker, 1)).Stopped, "worker:0 alone does not decide a generic job")

	_, err := Run(context.Background(), shJob("true", group(taskspec.Worker, 1)), Options{Success: "most"})
	require.ErrorContains(t, err, `unknown success rule "most"`)
}

func TestLauncherFailureIsReported(t *testing.T) {
	res, _ := runLocal(t, context.Background(),
		taskspec.Job{Name: "t", Tasks: []taskspec.TaskGroup{group(taskspec.Worker, 1)}, Command: "/nonexistent/program"}, Options{})
	require.Equal(t, StatusFailed, res.Status)
	require.Contains(t, res.Diagnostics, "worker:0")
	require.Contains(t, res.Diagnostics, "/nonexistent/program")
	require.Equal(t, 127, res.Tasks[0].ExitCode)
}

func TestBadJobIsRefusedBeforeAnythingRuns(t *testing.T) {
	_, err := Run(context.Background(), taskspec.Job{Name: "t", Command: "true"}, Options{})
	require.ErrorContains(t, err, "no tasks")
	_, err = Run(context.Background(), taskspec.Job{Name: "t", Tasks: []taskspec.TaskGroup{group(taskspec.Worker, 1)}}, Options{})
	require.ErrorContains(t, err, "nothing to run")
}

func TestMaxRestartsRunsTheClusterAgain(t *testing.T) {
	// worker:0 fails on the first run only: TFYARN_RESTART says which run
	// this is. The chief waits for it, as training would.
	dir := t.TempDir()
	script := `echo "run $TFYARN_RESTART attempt $TFYARN_TASK_ATTEMPT"
	case $TFYARN_TASK in
	worker:0) [ "$TFYARN_RESTART" = 0 ] && { echo "bad shard" >&2; exit 1; }; touch "$DIR/done"; exit 0 ;;
	chief:0) for i in $(seq 400); do [ -e "$DIR/done" ] && exit 0; sleep 0.05; done; exit 9 ;;
	esac`
	job := shJob(script, group(taskspec.Chief, 1), group(taskspec.Worker, 1))
	job.Restarts.Max = 1
	res, out := runLocal(t, context.Background(), job, Options{Env: append(os.Environ(), "DIR="+dir)})
	require.Equal(t, StatusSucceeded, res.Status, res.Diagnostics)
	require.Equal(t, 1, res.Restarts)
	require.Contains(t, res.Diagnostics, "restart 1 after worker:0 failed: exit code 1")
	require.Contains(t, out.String(), "[worker:0] run 1 attempt 1\n", "the restarted task knows it")
	require.Contains(t, out.String(), "[chief:0] run 1 attempt 1\n", "every task ran again")
	for _, tr := range res.Tasks {
		require.Equal(t, 1, tr.Attempt, "%s", tr.Task)
		require.Zero(t, tr.ExitCode, "%s", tr.Task)
	}

	// Without --max-restarts the same failure fails the job.
	require.NoError(t, os.Remove(filepath.Join(dir, "done")))
	job.Restarts.Max = 0
	res, _ = runLocal(t, context.Background(), job, Options{Env: append(os.Environ(), "DIR="+dir)})
	require.Equal(t, StatusFailed, res.Status)
	require.Zero(t, res.Restarts)
	require.True(t, strings.HasPrefix(res.Diagnostics, "worker:0 failed: exit code 1"), res.Diagnostics)
}
