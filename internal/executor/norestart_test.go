package executor

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// A program that fails on its own after writing its no-restart file has
// its first non-empty line (control characters as spaces) sent with its
// exit; after an exit 0, or with no file written (a stale one from an
// earlier run is removed first), nothing is sent.
func TestNoRestartReasonReachesTheAM(t *testing.T) {
	for _, tc := range []struct {
		name, program, stale, want string
	}{
		{"failed", `printf '\n  shard 7 is corrupt:\tfix the input  \nsecond line\n' > "$TFYARN_NO_RESTART_FILE"; exit 2`, "", "shard 7 is corrupt: fix the input"},
		{"succeeded", `echo "no use" > "$TFYARN_NO_RESTART_FILE"; exit 0`, "", ""},
		{"stale file", `exit 1`, "an earlier run's reason", ""},
		{"empty file", `: > "$TFYARN_NO_RESTART_FILE"; exit 1`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := startAM(t, group(taskspec.Worker, 1))
			l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `[ "$TFYARN_NO_RESTART_FILE" = "$PWD/tfyarn-no-restart-worker-0" ] || exit 99; `+tc.program)
			l.cfg.Dir = t.TempDir()
			if tc.stale != "" {
				require.NoError(t, os.WriteFile(filepath.Join(l.cfg.Dir, contract.NoRestartFileName("worker", 0)), []byte(tc.stale), 0o644))
			}
			o := l.run(t)
			require.NoError(t, o.err)
			require.NotEqual(t, 99, o.code, "TFYARN_NO_RESTART_FILE is in the working directory")
			e, ok := a.board.Exit(id(taskspec.Worker, 0))
			require.True(t, ok)
			require.Equal(t, tc.want, e.NoRestart)
			if tc.want != "" {
				require.Contains(t, l.stderr.String(), "the program asked not to be restarted: "+tc.want)
			}
		})
	}
}

// A long reason is cut to one stderr line's length; a FIFO in the file's
// place does not block the launcher.
func TestNoRestartReasonBounded(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long")
	require.NoError(t, os.WriteFile(long, []byte(strings.Repeat("é", contract.MaxNoRestartRead)), 0o644))
	got := noRestartReason(long, &logger{w: io.Discard})
	require.LessOrEqual(t, len(got), rendezvous.MaxStderrLineLen)
	require.True(t, strings.HasSuffix(got, "…"), got)

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	require.Empty(t, noRestartReason(fifo, &logger{w: io.Discard}))
}

// A program the AM stops, or that a signal from outside ends, failed for
// no reason of its own: its no-restart file is not sent.
func TestNoRestartFileIgnoredAfterAStop(t *testing.T) {
	for _, how := range []string{"stop order", "signal"} {
		t.Run(how, func(t *testing.T) {
			a := startAM(t, group(taskspec.Worker, 1))
			l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `echo "no use" > "$TFYARN_NO_RESTART_FILE"; echo ready; exec sleep 30`)
			l.cfg.Dir = t.TempDir()
			done := l.start(t)
			waitFor(t, l.stdout, "ready")
			if how == "stop order" {
				a.board.Stop(id(taskspec.Worker, 0), "the chief finished")
			} else {
				l.signals <- syscall.SIGTERM
			}
			o := wait(t, done, l)
			require.NoError(t, o.err)
			require.Equal(t, 128+15, o.code)
			e, ok := a.board.Exit(id(taskspec.Worker, 0))
			require.True(t, ok)
			require.Empty(t, e.NoRestart)
			require.NotContains(t, l.stderr.String(), "asked not to be restarted")
		})
	}
}

// An elastic torchrun node starts its processes again when one fails, so
// its launcher watches the no-restart file while it runs: once a process
// has written it, the launcher ends the program and sends the reason.
func TestNoRestartEndsAProgramThatRestartsItsProcesses(t *testing.T) {
	dir := t.TempDir()
	// A stand-in for python -m torch.distributed.run: its "process" asks
	// not to be restarted, and it goes on as torchrun's agent would.
	fake := filepath.Join(dir, "python")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho \"shard 7 is corrupt\" > \"$TFYARN_NO_RESTART_FILE\"\necho started\nexec sleep 60\n"), 0o755))
	a := startAM(t, group(taskspec.Worker, 1))
	l := a.newLaunch(id(taskspec.Worker, 0), fake, "train.py")
	l.cfg.Dir = dir
	l.cfg.Env = append(os.Environ(), contract.EnvFramework+"=pytorch", contract.EnvMinWorkers+"=1", contract.EnvJobService+"=127.0.0.1:9")
	o := l.run(t)
	require.NoError(t, o.err, l.stderr.String())
	require.Equal(t, 128+15, o.code, l.stderr.String())
	require.Contains(t, l.stderr.String(), "elastic torchrun node")
	require.Contains(t, l.stderr.String(), "a process asked not to be restarted (shard 7 is corrupt), and the program restarts its processes: sending SIGTERM")
	e, ok := a.board.Exit(id(taskspec.Worker, 0))
	require.True(t, ok)
	require.Equal(t, "shard 7 is corrupt", e.NoRestart)
	require.False(t, e.Stopped)
}
