package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/framework/tensorflow"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

type tfConfig struct {
	Cluster map[string][]string `json:"cluster"`
	Task    struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	} `json:"task"`
}

func TestThreeTasksMeet(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 2), group(taskspec.PS, 1))
	tasks := []taskspec.TaskID{id(taskspec.Worker, 0), id(taskspec.Worker, 1), id(taskspec.PS, 0)}
	script := `echo "TF_CONFIG=$TF_CONFIG"; echo "args: $1 $2 $3 $4"`
	var launches []*launch
	var results []<-chan outcome
	for _, task := range tasks {
		l := a.newLaunch(task, "sh", "-c", script, "sh", "{job_name}", "{task_index}", "{worker_hosts}", "{ps_hosts}")
		launches = append(launches, l)
		results = append(results, l.start(t))
	}
	for i := range tasks {
		o := wait(t, results[i], launches[i])
		require.NoError(t, o.err)
		require.Equal(t, 0, o.code, launches[i].stderr.String())
	}

	spec, ok := a.board.Published()
	require.True(t, ok)
	require.Len(t, spec[taskspec.Worker], 2)
	require.Len(t, spec[taskspec.PS], 1)
	for i, task := range tasks {
		out := launches[i].stdout.String()
		line, _, _ := strings.Cut(strings.SplitN(out, "TF_CONFIG=", 2)[1], "\n")
		var got tfConfig
		require.NoError(t, json.Unmarshal([]byte(line), &got), out)
		require.Equal(t, string(task.Type), got.Task.Type)
		require.Equal(t, task.Index, got.Task.Index)
		require.Equal(t, spec[taskspec.Worker], got.Cluster["worker"])
		require.Equal(t, spec[taskspec.PS], got.Cluster["ps"])
		want := fmt.Sprintf("args: %s %d %s %s", task.Type, task.Index, strings.Join(spec[taskspec.Worker], ","), spec[taskspec.PS][0])
		require.Contains(t, out, want)
		// Its own address is the one it registered, and the start line says so.
		require.Contains(t, launches[i].stderr.String(), "tfyarn task "+task.String()+": "+task.String()+" at 127.0.0.1:")
		require.Contains(t, launches[i].stderr.String(), "the program exited with code 0")
	}
}

func TestExitCodeAndStderrTailReachTheAM(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `for i in $(seq 1 80); do echo "line $i" >&2; done; echo "Traceback: boom" >&2; exit 3`)
	o := l.run(t)
	require.NoError(t, o.err)
	require.Equal(t, 3, o.code)
	require.Contains(t, l.stderr.String(), "Traceback: boom", "stderr is passed through")

	e, ok := a.board.Exit(id(taskspec.Worker, 0))
	require.True(t, ok)
	require.Equal(t, 3, e.ExitCode)
	require.False(t, e.Stopped)
	require.Len(t, e.StderrTail, stderrTailLines)
	require.Equal(t, "Traceback: boom", e.StderrTail[len(e.StderrTail)-1])
	require.Equal(t, "line 32", e.StderrTail[0])
}

func TestKilledBySignalIs128PlusN(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	o := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `kill -KILL $$`).run(t)
	require.NoError(t, o.err)
	require.Equal(t, 128+9, o.code)
}

func TestSIGTERMIsForwarded(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `trap 'echo caught TERM; exit 0' TERM; echo ready; while :; do sleep 0.05; done`)
	done := l.start(t)
	waitFor(t, l.stdout, "ready")
	l.signals <- syscall.SIGTERM
	o := wait(t, done, l)
	require.NoError(t, o.err)
	require.Equal(t, 0, o.code)
	require.Contains(t, l.stdout.String(), "caught TERM")
	require.Contains(t, l.stderr.String(), "forwarding SIGTERM")
	// The AM learns the signal came from outside, so it waits for YARN's reason.
	e, ok := a.board.Exit(id(taskspec.Worker, 0))
	require.True(t, ok)
	require.Equal(t, "SIGTERM", e.Signal)
	require.False(t, e.Stopped)
}

// `tfyarn task`'s context ends on SIGTERM as its signal channel gets it: a
// NodeManager's kill (here the cancellation first, the signal 20 ms later)
// is still told to the AM as a signal from outside, which then waits for
// YARN's reason (a preemption is no failure of the program). A CI run once
// lost a preempted task's restart to the cancellation winning the race.
func TestCancellationBySIGTERMIsASignalFromOutside(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `echo ready; exec sleep 30`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan outcome, 1)
	go func() {
		code, err := Run(ctx, l.cfg)
		done <- outcome{code, err}
	}()
	waitFor(t, l.stdout, "ready")
	cancel()
	time.Sleep(20 * time.Millisecond)
	l.signals <- syscall.SIGTERM
	o := wait(t, done, l)
	require.NoError(t, o.err)
	require.Equal(t, 128+15, o.code)
	e, ok := a.board.Exit(id(taskspec.Worker, 0))
	require.True(t, ok)
	require.Equal(t, "SIGTERM", e.Signal, l.stderr.String())
	require.NotContains(t, l.stderr.String(), "the launcher was cancelled")
}

func TestSignalBeforeTheProgramStarts(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 2)) // worker:1 never comes
	marker := filepath.Join(t.TempDir(), "ran")
	l := a.newLaunch(id(taskspec.Worker, 0), "touch", marker)
	done := l.start(t)
	require.Eventually(t, func() bool { return len(a.board.Registrations()) == 1 }, 10*time.Second, 10*time.Millisecond)
	l.signals <- syscall.SIGTERM
	o := wait(t, done, l)
	require.Equal(t, 128+15, o.code)
	require.ErrorContains(t, o.err, "before the program started")
	require.NoFileExists(t, marker)
}

func TestStopOrderStopsTheProgram(t *testing.T) {
	a := startAM(t, group(taskspec.PS, 1))
	l := a.newLaunch(id(taskspec.PS, 0), "sh", "-c", `echo ready; exec sleep 30`)
	done := l.start(t)
	waitFor(t, l.stdout, "ready")
	a.board.Stop(id(taskspec.PS, 0), "the chief finished")
	o := wait(t, done, l)
	require.NoError(t, o.err)
	require.Equal(t, 128+15, o.code)
	require.Contains(t, l.stderr.String(), "the AM stops this task (the chief finished)")
	e, ok := a.board.Exit(id(taskspec.PS, 0))
	require.True(t, ok)
	require.True(t, e.Stopped)
	require.Empty(t, e.Signal, "the AM's own stop is no signal from outside")
}

func TestStopOrderEscalatesToSIGKILL(t *testing.T) {
	a := startAM(t, group(taskspec.PS, 1))
	l := a.newLaunch(id(taskspec.PS, 0), "sh", "-c", `trap '' TERM; echo ready; while :; do sleep 0.05; done`)
	l.cfg.ProgramStopGrace = 200 * time.Millisecond
	done := l.start(t)
	waitFor(t, l.stdout, "ready")
	a.board.Stop(id(taskspec.PS, 0), "job over")
	o := wait(t, done, l)
	require.NoError(t, o.err)
	require.Equal(t, 128+9, o.code)
	require.Contains(t, l.stderr.String(), "grace period: SIGKILL")
}

func TestWrongSecretFailsClearly(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	marker := filepath.Join(t.TempDir(), "ran")
	l := a.newLaunch(id(taskspec.Worker, 0), "touch", marker)
	l.cfg.Secret, _ = rendezvous.NewSecret()
	l.cfg.RendezvousTimeout = 5 * time.Second // no answer verifies: retried until then
	o := l.run(t)
	require.Equal(t, ExitLauncherFailed, o.code)
	require.ErrorIs(t, o.err, rendezvous.ErrUnauthorized)
	require.ErrorContains(t, o.err, "did not verify")
	require.ErrorContains(t, o.err, "wrong container key")
	require.NoFileExists(t, marker)
	require.Empty(t, a.board.Registrations())
}

func TestMissingProgramIs127(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	o := a.newLaunch(id(taskspec.Worker, 0), "/nonexistent/python3", "train.py").run(t)
	require.Equal(t, 127, o.code)
	require.Error(t, o.err)
	e, ok := a.board.Exit(id(taskspec.Worker, 0))
	require.True(t, ok)
	require.Equal(t, 127, e.ExitCode)
	require.Contains(t, e.StderrTail[0], "/nonexistent/python3")
}

func TestCancelStopsTheProgram(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `echo ready; exec sleep 30`)
	ctx, cancel := contextWithCancel()
	done := make(chan outcome, 1)
	go func() { code, err := Run(ctx, l.cfg); done <- outcome{code, err} }()
	waitFor(t, l.stdout, "ready")
	cancel()
	o := wait(t, done, l)
	require.Equal(t, 128+15, o.code)
}

// The port handoff, end to end: the program (this test binary, acting as
// a TF server) binds the held port with SO_REUSEPORT, the launcher sees it
// listen and lets go, and a peer reaches the program at the registered
// address.
func TestPortHandoffToTheProgram(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), os.Args[0])
	l.cfg.Env = append(os.Environ(), helperEnv+"=listen")
	done := l.start(t)
	waitFor(t, l.stdout, "listening")
	waitFor(t, l.stderr, "the program listens on port")
	regs := a.board.Registrations()
	require.Len(t, regs, 1)
	c, err := net.DialTimeout("tcp", regs[0].Addr(), 5*time.Second)
	require.NoError(t, err)
	c.Close()
	o := wait(t, done, l)
	require.NoError(t, o.err)
	require.Equal(t, 0, o.code, l.stderr.String())
	require.Contains(t, l.stdout.String(), "accepted")
}

// A program that turned TF_GRPC_REUSE_PORT off gets the port freed before
// it starts, since its server could not share it.
func TestReusePortOffReleasesBeforeExec(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0))
	l.cfg.Env = append(os.Environ(), tensorflow.EnvTFReusePort+"=false")
	l.cfg.Command = []string{"sh", "-c", `command -v python3 >/dev/null || { echo "no python"; exit 0; }
python3 -c 'import socket,os; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("", int(os.environ["TFYARN_TASK_PORT"]))); s.listen(); print("bound")'`}
	o := l.run(t)
	require.NoError(t, o.err)
	out := l.stdout.String()
	require.NotContains(t, out, "no python", "this test needs python3 on PATH (.ci/run installs it)")
	require.Equal(t, 0, o.code, l.stderr.String())
	require.Contains(t, out, "bound")
}

// A process the program detached (setsid, ignoring SIGTERM) does not
// outlive the task: the launcher, its subreaper, ends it (SIGTERM, then
// SIGKILL after OrphanGrace) and reaps it before reporting the exit.
func TestDetachedGrandchildEndsWithTheProgram(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	pidFile := filepath.Join(t.TempDir(), "pid")
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c",
		`(setsid sh -c 'trap "" TERM HUP; echo $$ > `+pidFile+`; exec sleep 302' &); while [ ! -s `+pidFile+` ]; do sleep 0.05; done`)
	l.cfg.OrphanGrace = 200 * time.Millisecond
	o := l.run(t)
	require.NoError(t, o.err)
	require.Equal(t, 0, o.code)
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	_, err = os.Stat(fmt.Sprintf("/proc/%d", pid))
	require.True(t, os.IsNotExist(err), "the detached sleep (pid %d) still runs (or is an unreaped zombie): %v", pid, err)
	require.Contains(t, l.stderr.String(), "ended 1 process(es) the program left running")
}
