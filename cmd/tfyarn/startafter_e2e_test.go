//go:build e2e

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// startMarkProgram records, as its first acts, when each task's program
// started: the time (ns) and its process's start time (clock ticks since
// boot, /proc/PID/stat), in $MARKS/<task>. A ps then waits to be stopped; a
// worker adds how many ps tasks had a program running when it started
// (processes with the application's TFYARN_APP_ID and a ps TF_CONFIG,
// which only a started program has) and ends. A ps's shell sleeps in a
// child rather than exec: a process in the middle of execve has no
// environ to read, and a worker's scan at that moment missed a running ps.
const startMarkProgram = `now=$(date +%s%N); ticks=$(cut -d' ' -f22 /proc/$$/stat)
if [ "$TFYARN_TASK_TYPE" = ps ]; then echo "$now $ticks 0" > "$MARKS/$TFYARN_TASK"; sleep 60; fi
seen=$(for f in /proc/[0-9]*/environ; do
  e=$(tr '\0' '\n' < "$f" 2>/dev/null) || continue
  case "$e" in *"TFYARN_APP_ID=$TFYARN_APP_ID"*) case "$e" in *'TF_CONFIG='*'"type":"ps"'*) printf '%s\n' "$e" | grep '^TFYARN_TASK=';; esac;; esac
done | sort -u | wc -l)
echo "$now $ticks $seen" > "$MARKS/$TFYARN_TASK"`

type startMark struct {
	ns, ticks int64
	psSeen    int
}

// readStartMarks returns each task's start mark.
func readStartMarks(t *testing.T, dir string, tasks ...string) map[string]startMark {
	t.Helper()
	marks := map[string]startMark{}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, task))
		require.NoError(t, err, "%s's program left no mark", task)
		f := strings.Fields(string(b))
		require.Len(t, f, 3, "%s: %q", task, b)
		var m startMark
		m.ns, err = strconv.ParseInt(f[0], 10, 64)
		require.NoError(t, err)
		m.ticks, err = strconv.ParseInt(f[1], 10, 64)
		require.NoError(t, err)
		m.psSeen, err = strconv.Atoi(f[2])
		require.NoError(t, err)
		marks[task] = m
	}
	return marks
}

// requireWorkersAfterPS: every worker's program process started no earlier
// than every ps's (clock ticks: the ps's process exists before the worker
// is let go, though its shell may reach its first line a moment after the
// worker's), and, with checkSeen, found both ps programs running.
func requireWorkersAfterPS(t *testing.T, dir string, checkSeen bool) {
	t.Helper()
	marks := readStartMarks(t, dir, "ps:0", "ps:1", "worker:0", "worker:1")
	for _, w := range []string{"worker:0", "worker:1"} {
		for _, p := range []string{"ps:0", "ps:1"} {
			t.Logf("%s's program's first line ran %.1f ms after %s's", w, float64(marks[w].ns-marks[p].ns)/1e6, p)
			require.GreaterOrEqual(t, marks[w].ticks, marks[p].ticks, "%s's program process started before %s's", w, p)
		}
		if checkSeen {
			require.Equal(t, 2, marks[w].psSeen, "ps tasks with a running program when %s's started", w)
		}
	}
}

// markDir is a directory the containers (run by this user on this machine)
// can write into.
func markDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "tfyarn-start-after-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o777))
	return dir
}

// TestE2EStartAfter: with --start-after worker=ps the workers' programs
// start only once every ps task's program has started, on YARN and with
// --local; bad orders are refused with one line, exit 2, nothing created.
//
//	go test -tags e2e -run '^TestE2EStartAfter$' ./cmd/tfyarn/
func TestE2EStartAfter(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	job := []string{"--worker", "2x1c,128m", "--ps", "2x1c,128m", "--success", "chief", "--start-after", "worker=ps"}

	t.Run("yarn", func(t *testing.T) {
		t.Parallel()
		dir := markDir(t)
		args := append(append([]string{"run"}, job...), "--setenv", "MARKS="+dir, "--output", "json", "--", "sh", "-c", startMarkProgram)
		stdout, stderr, code := execTfyarn(t, c, bin, nil, args...)
		require.Equal(t, exitOK, code, stderr)
		require.Equal(t, "SUCCEEDED", runJSON(t, stdout).FinalStatus)
		requireWorkersAfterPS(t, dir, true)
	})
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		dir := markDir(t)
		args := append(append([]string{"run", "--local"}, job...), "--setenv", "MARKS="+dir, "--", "sh", "-c", startMarkProgram)
		_, stderr, code := execTfyarn(t, c, bin, nil, args...)
		require.Equal(t, exitOK, code, stderr)
		// Local runs share the app id "local": only the order is checked.
		requireWorkersAfterPS(t, dir, false)
	})
	t.Run("rejects", func(t *testing.T) {
		t.Parallel()
		user := c.User(t, "tfyarn-e2e-"+randomHex(t))
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--worker", "1c,128m", "--start-after", "worker=ps"}, "tfyarn: --start-after worker=ps: the job has no ps task to wait for; add --ps or drop the pair"},
			{[]string{"--worker", "1c,128m", "--ps", "1c,128m", "--start-after", "worker=master"}, `tfyarn: --start-after "worker=master": unknown task type "master"; expected one of chief, worker, ps, evaluator, tensorboard`},
			{[]string{"--worker", "1c,128m", "--ps", "1c,128m", "--start-after", "ps=ps"}, "tfyarn: --start-after ps=ps: a type cannot wait for itself"},
			{[]string{"--worker", "1c,128m", "--ps", "1c,128m", "--start-after", "worker=ps,ps=worker"}, "tfyarn: --start-after: worker → ps → worker wait for one another, so none would start; drop one of these pairs"},
			{[]string{"--local", "--worker", "1c,128m", "--ps", "1c,128m", "--start-after", "ps=worker,worker=ps"}, "tfyarn: --start-after: worker → ps → worker wait for one another, so none would start; drop one of these pairs"},
		} {
			args := append(append([]string{"run"}, tc.args...), "--", "true")
			stdout, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + user}, args...)
			require.Equal(t, exitUsage, code, "%v: %s", tc.args, stderr)
			require.Empty(t, stdout)
			require.Equal(t, tc.want+"\n", stderr, "%v", tc.args)
		}
		requireNothingCreatedFor(t, c, user)
	})
}
