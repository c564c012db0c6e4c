package executor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
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
	a.board.Warn(id(taskspec.Worker, 0), l.cfg.ContainerID, rendezvous.Notice{Kind: contract.WarningPreemption, Deadline: deadline, Reason: "YARN's scheduler will preempt container " + l.cfg.ContainerID + " (strict contract)"})
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
	a.board.Warn(id(taskspec.Worker, 0), l.cfg.ContainerID, rendezvous.Notice{Kind: contract.WarningPreemption, Deadline: time.Now().Add(time.Minute), Reason: "r"})
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
	a.board.Warn(id(taskspec.Worker, 0), l.cfg.ContainerID, rendezvous.Notice{Kind: contract.WarningPreemption, Deadline: time.Now().Add(time.Minute), Reason: "r"})
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
	a.board.Warn(id(taskspec.Worker, 0), "container_test_earlier", rendezvous.Notice{Kind: contract.WarningPreemption, Deadline: time.Now().Add(time.Minute), Reason: "r"})
	o := wait(t, ch, l)
	require.Equal(t, 0, o.code)
	require.NotContains(t, l.stdout.String(), "warned")
}

// Every warning is a line appended to TFYARN_WARNINGS_FILE (0600, absent
// until the first: a stale one is removed first). Idle GPUs come without
// SIGWINCH and leave TFYARN_PREEMPTION_FILE alone, which mean "you will
// be preempted" to the programs that watch them; a preemption after them
// is the file's second line, its deadline with it, then the signal.
func TestWarningsFileHasEveryWarning(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	dir := t.TempDir()
	stale := filepath.Join(dir, "tfyarn-warnings-worker-0.jsonl")
	require.NoError(t, os.WriteFile(stale, []byte("stale\n"), 0o644))
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `
		trap 'cp "$TFYARN_WARNINGS_FILE" seen.jsonl; echo "signalled"; exit 0' WINCH
		test -e "$TFYARN_WARNINGS_FILE" && echo "the file is there before the warning"
		echo "file=$TFYARN_WARNINGS_FILE"
		while ! grep -q gpu-idle "$TFYARN_WARNINGS_FILE" 2>/dev/null; do sleep 0.05; done
		test -e "$TFYARN_PREEMPTION_FILE" && echo "a preemption file for idle GPUs"
		echo "idle seen"
		while :; do sleep 0.05; done`)
	l.cfg.Dir = dir
	ch := l.start(t)
	waitFor(t, l.stdout, "file=")
	require.NotContains(t, l.stdout.String(), "the file is there before the warning")
	require.Contains(t, l.stdout.String(), "file="+stale+"\n", "an absolute path in the working directory")

	ends := time.UnixMilli(time.Now().Add(time.Minute).UnixMilli())
	idle := "GPUs idle for 30s (0 % utilisation): the job fails at --gpu-idle-timeout 1m0s unless they work"
	a.board.Warn(id(taskspec.Worker, 0), l.cfg.ContainerID, rendezvous.Notice{Kind: contract.WarningGPUIdle, Deadline: ends, Reason: idle})
	waitFor(t, l.stdout, "idle seen")
	time.Sleep(200 * time.Millisecond) // a signal would have come by now
	require.NotContains(t, l.stdout.String(), "signalled")
	require.NotContains(t, l.stdout.String(), "a preemption file for idle GPUs")
	st, err := os.Stat(stale)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	deadline := time.UnixMilli(time.Now().Add(15 * time.Second).UnixMilli())
	a.board.Warn(id(taskspec.Worker, 0), l.cfg.ContainerID, rendezvous.Notice{Kind: contract.WarningPreemption, Deadline: deadline, Reason: "YARN's scheduler will preempt container " + l.cfg.ContainerID + " (strict contract)"})
	o := wait(t, ch, l)
	require.NoError(t, o.err)
	require.Equal(t, 0, o.code, l.stderr.String())
	require.Contains(t, l.stdout.String(), "signalled")

	data, err := os.ReadFile(filepath.Join(dir, "seen.jsonl"))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	require.Len(t, lines, 3, "two lines, appended: %q", data)
	var gpu, pre contract.Warning
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &gpu))
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &pre))
	require.Equal(t, contract.WarningGPUIdle, gpu.Kind)
	require.Equal(t, idle, gpu.Reason)
	require.Equal(t, ends.UnixMilli(), gpu.EndsAtUnixMS)
	require.Equal(t, ends.UTC().Format("2006-01-02T15:04:05.000Z"), gpu.EndsAt)
	require.Zero(t, gpu.DeadlineUnixMS)
	require.Equal(t, contract.WarningPreemption, pre.Kind)
	require.Equal(t, deadline.UnixMilli(), pre.DeadlineUnixMS)
	require.Zero(t, pre.EndsAtUnixMS)
	for _, w := range []contract.Warning{gpu, pre} {
		require.Equal(t, "worker:0", w.Task)
		require.Equal(t, l.cfg.ContainerID, w.Container)
		require.InDelta(t, time.Now().UnixMilli(), w.TimeUnixMS, 10_000)
	}
	require.LessOrEqual(t, gpu.TimeUnixMS, pre.TimeUnixMS)
	require.Contains(t, l.stderr.String(), "warning (gpu-idle): "+idle+"; appended to "+stale)
}

// The launcher appends to the warnings file only: a symbolic link or a
// FIFO the program put in its place takes nothing (and blocks nothing),
// and it stops at contract.MaxWarningLines lines.
func TestWarningsFileBounds(t *testing.T) {
	dir := t.TempDir()
	f := &warningFiles{all: filepath.Join(dir, "w.jsonl")}
	w := contract.NewWarning(contract.WarningGPUIdle, time.Now(), time.Time{}, "idle", "worker:0", "c1")
	for range contract.MaxWarningLines {
		require.NoError(t, f.add(w))
	}
	require.ErrorContains(t, f.add(w), "holds 256 lines already")
	data, err := os.ReadFile(f.all)
	require.NoError(t, err)
	require.Equal(t, contract.MaxWarningLines, strings.Count(string(data), "\n"))

	target := filepath.Join(dir, "elsewhere")
	require.NoError(t, os.WriteFile(target, nil, 0o600))
	link := &warningFiles{all: filepath.Join(dir, "link.jsonl")}
	require.NoError(t, os.Symlink(target, link.all))
	require.Error(t, link.add(w))
	data, err = os.ReadFile(target)
	require.NoError(t, err)
	require.Empty(t, data)

	fifo := &warningFiles{all: filepath.Join(dir, "fifo.jsonl")}
	require.NoError(t, syscall.Mkfifo(fifo.all, 0o600))
	require.Error(t, fifo.add(w))
}

// TestClaimsWarningsFile pins docs/failures.md's "The warnings file" to
// the code: the variable, the mode, the bound, and its example line, which
// is exactly what the launcher writes for that warning.
func TestClaimsWarningsFile(t *testing.T) {
	section := clustertest.DocSection(t, "## The warnings file")
	text := strings.Join(strings.Fields(section), " ")
	require.Contains(t, text, "`"+contract.EnvWarningsFile+"`")
	require.Contains(t, text, "Its mode is 0600")
	require.Contains(t, text, fmt.Sprintf("A launcher appends at most %d lines", contract.MaxWarningLines))
	require.Contains(t, text, "`TestWarningsFileHasEveryWarning` holds this section")
	for _, k := range []contract.WarningKind{contract.WarningPreemption, contract.WarningGPUIdle} {
		require.Contains(t, text, "`"+string(k)+"`")
	}
	line := regexp.MustCompile("(?m)^\\{\"kind\".*\\}$").FindString(section)
	require.NotEmpty(t, line, "the section shows a line")
	var w contract.Warning
	require.NoError(t, json.Unmarshal([]byte(line), &w))
	at, ends := time.UnixMilli(w.TimeUnixMS), time.UnixMilli(w.EndsAtUnixMS)
	require.Equal(t, line+"\n", string(contract.NewWarning(w.Kind, at, ends, w.Reason, w.Task, w.Container).Line()))
}
