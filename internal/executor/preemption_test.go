package executor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The AM's warning reaches the program as a file at TFYARN_PREEMPTION_FILE
// (absent until then: a stale one is removed first) and then SIGWINCH to
// its process group, which a shell can trap.
func TestPreemptionWarningReachesTheProgram(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	dir := t.TempDir()
	stale := filepath.Join(dir, "tfyarn-preemption-worker-0.json")
	require.NoError(t, os.WriteFile(stale, []byte("stale\n"), 0o644))
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `
		trap 'cp "$TFYARN_PREEMPTION_FILE" seen.json; echo "signalled"; exit 0' WINCH
		test -e "$TFYARN_PREEMPTION_FILE" && echo "the file is there before the warning"
		echo "file=$TFYARN_PREEMPTION_FILE"
		while :; do sleep 0.05; done`)
	l.cfg.Dir = dir
	ch := l.start(t)
	waitFor(t, l.stdout, "file=")
	require.NotContains(t, l.stdout.String(), "the file is there before the warning")
	require.Contains(t, l.stdout.String(), "file="+stale+"\n", "an absolute path in the working directory")

	deadline := time.UnixMilli(time.Now().Add(15 * time.Second).UnixMilli())
	a.board.WarnPreemption(id(taskspec.Worker, 0), l.cfg.ContainerID, rendezvous.PreemptionNotice{Deadline: deadline, Reason: "YARN's scheduler will preempt container " + l.cfg.ContainerID + " (strict contract)"})
	o := wait(t, ch, l)
	require.NoError(t, o.err)
	require.Equal(t, 0, o.code, l.stderr.String())
	require.Contains(t, l.stdout.String(), "signalled")

	data, err := os.ReadFile(filepath.Join(dir, "seen.json"))
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(string(data), "}\n") && strings.Count(string(data), "\n") == 1, "one JSON line: %q", data)
	var w contract.PreemptionWarning
	require.NoError(t, json.Unmarshal(data, &w))
	require.Equal(t, deadline.UnixMilli(), w.DeadlineUnixMS)
	require.Equal(t, deadline.UTC().Format("2006-01-02T15:04:05.000Z"), w.Deadline)
	require.Equal(t, "worker:0", w.Task)
	require.Equal(t, l.cfg.ContainerID, w.Container)
	require.Contains(t, w.Reason, "(strict contract)")
	require.Contains(t, l.stderr.String(), "YARN will preempt this container from ")
	require.Contains(t, l.stderr.String(), "sending SIGWINCH to the program")
}

// The signal goes to the program's whole process group: a child of the
// program (here a shell under the shell) gets it too.
func TestPreemptionSignalReachesTheProcessGroup(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `
		sh -c 'trap "echo child signalled; exit 0" WINCH; echo ready; while :; do sleep 0.05; done' &
		wait`)
	l.cfg.Dir = t.TempDir()
	ch := l.start(t)
	waitFor(t, l.stdout, "ready")
	a.board.WarnPreemption(id(taskspec.Worker, 0), l.cfg.ContainerID, rendezvous.PreemptionNotice{Deadline: time.Now().Add(time.Minute), Reason: "r"})
	o := wait(t, ch, l)
	require.Equal(t, 0, o.code, l.stderr.String())
	require.Contains(t, l.stdout.String(), "child signalled")
}

// A program that does not handle SIGWINCH is not disturbed by it: it runs
// on and ends as it would have.
func TestPreemptionSignalDoesNotKill(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	dir := t.TempDir()
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `
		echo ready
		while [ ! -e "$TFYARN_PREEMPTION_FILE" ]; do sleep 0.05; done
		sleep 0.5; echo "still running"; exit 4`)
	l.cfg.Dir = dir
	ch := l.start(t)
	waitFor(t, l.stdout, "ready")
	a.board.WarnPreemption(id(taskspec.Worker, 0), l.cfg.ContainerID, rendezvous.PreemptionNotice{Deadline: time.Now().Add(time.Minute), Reason: "r"})
	o := wait(t, ch, l)
	require.NoError(t, o.err)
	require.Equal(t, 4, o.code, l.stderr.String())
	require.Contains(t, l.stdout.String(), "still running")
}

// A warning for another container of the task (an earlier attempt's)
// does not reach this one.
func TestPreemptionWarningForAnotherContainer(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `echo ready; sleep 1.5; test -e "$TFYARN_PREEMPTION_FILE" && echo warned; exit 0`)
	l.cfg.Dir = t.TempDir()
	ch := l.start(t)
	waitFor(t, l.stdout, "ready")
	a.board.WarnPreemption(id(taskspec.Worker, 0), "container_test_earlier", rendezvous.PreemptionNotice{Deadline: time.Now().Add(time.Minute), Reason: "r"})
	o := wait(t, ch, l)
	require.Equal(t, 0, o.code)
	require.NotContains(t, l.stdout.String(), "warned")
}
