//go:build e2e

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/contract"
	"golang.org/x/sys/unix"
)

// preemptionLoop is a plain training loop that checkpoints on YARN's preemption warning: its
// step counter lives in TFYARN_FAULT_DIR/checkpoint (a directory every node sees, as HDFS or a
// shared filesystem would be); on SIGWINCH it notes the warning and, at the end of the step under
// way, keeps a copy of the warning file (mtime preserved) and writes the checkpoint. Each run
// notes where it started and what it checkpointed in TFYARN_FAULT_DIR/runs.
const preemptionLoop = `d=$TFYARN_FAULT_DIR; ck=$d/checkpoint; r=$TFYARN_RESTART
step=0; [ -f "$ck" ] && step=$(cat "$ck")
echo "run $r from $step in $CONTAINER_ID at $PWD" >> "$d/runs"
warned=0; trap 'warned=1' WINCH
while [ $step -lt 300 ]; do
  sleep 0.05; step=$((step+1))
  if [ $warned = 1 ]; then
    cp -p "$TFYARN_PREEMPTION_FILE" "$d/warning-$r.json"
    echo $step > "$ck.tmp"; mv "$ck.tmp" "$ck"
    echo "checkpoint $r $step" >> "$d/runs"
    warned=2
  fi
done
echo "done $r $step" >> "$d/runs"`

// preemptionRounds is how many times the test preempts the task: 3, or
// TFYARN_PREEMPTION_ROUNDS (at most 8, under the 10 uncounted restarts a job may have) for a
// measurement of more samples.
func preemptionRounds(t *testing.T) int {
	n := 3
	if v := os.Getenv("TFYARN_PREEMPTION_ROUNDS"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(t, err, "TFYARN_PREEMPTION_ROUNDS")
		require.True(t, n >= 1 && n <= 8, "TFYARN_PREEMPTION_ROUNDS=%d: 1 to 8", n)
	}
	return n
}

// TestE2EPreemptionWarning: the test cluster's CapacityScheduler preempts a running task's
// container (cluster.sh preempt: announced in the AM's next allocate response, killed 5 s later,
// the cluster's max_wait_before_kill). Each time the task's program finds the warning file at
// TFYARN_PREEMPTION_FILE (deadline: the cluster's 5 s wait, dated from the allocate call before
// the announcement) and gets SIGWINCH, checkpoints, is killed (exit status -102), restarts
// without counting toward --max-restarts 0, and resumes from its checkpoint; the job SUCCEEDS
// after three preemptions (TFYARN_PREEMPTION_ROUNDS=N: N). The time from the AM's log line of the announcement to the file is
// measured (TFYARN_PREEMPTION_RESULTS=FILE writes the table).
func TestE2EPreemptionWarning(t *testing.T) {
	c := clustertest.RequireFaults(t)
	bin := clustertest.BuildTfyarn(t)
	n := preemptionRounds(t)
	j := startFaultJob(t, c, bin, "--max-restarts", "0", "--worker", "1c,256m", "--", "sh", "-c", preemptionLoop)
	runs := filepath.Join(j.dir, "runs")
	type round struct {
		container         string
		announced, warned time.Time // the AM's log line; the warning file appearing (inotify)
		deadline, killed  time.Time // the file's deadline; when cluster.sh preempt returned (after the kill)
	}
	var rounds []round
	var fault time.Time
	for r := 0; r < n; r++ {
		// This run's container, from the program itself.
		var container, workdir string
		runLine := regexp.MustCompile(`(?m)^run ` + strconv.Itoa(r) + ` from \d+ in (container_\S+) at (\S+)$`)
		require.Eventually(t, func() bool {
			data, _ := os.ReadFile(runs)
			if m := runLine.FindSubmatch(data); m != nil {
				container, workdir = string(m[1]), string(m[2])
			}
			return container != ""
		}, 2*time.Minute, 50*time.Millisecond, "run %d of the program never started; stderr:\n%s", r, j.stderr())
		// The moment the launcher renames the warning into place, to the microsecond (the file's
		// mtime has the kernel's coarse clock, a few milliseconds).
		appeared := watchAppears(t, workdir, contract.PreemptionFileName("worker", 0), time.Minute)
		if r == 0 {
			fault = time.Now()
		}
		type answer struct {
			out string
			err error
			at  time.Time
		}
		done := make(chan answer, 1)
		go func() {
			cmd := exec.Command(filepath.Join(c.Root, "testcluster", "cluster.sh"), "preempt", container)
			cmd.Env = append(os.Environ(), "TC_DIR="+c.Dir)
			out, err := cmd.CombinedOutput()
			done <- answer{string(out), err, time.Now()}
		}()
		warning := filepath.Join(j.dir, fmt.Sprintf("warning-%d.json", r))
		var st os.FileInfo
		require.Eventually(t, func() bool {
			var err error
			st, err = os.Stat(warning)
			return err == nil
		}, 30*time.Second, 10*time.Millisecond, "run %d never saw a preemption warning; stderr:\n%s", r, j.stderr())
		announced := amLogTime(t, j.appID, "the ResourceManager will preempt "+container+" (worker:0, running; negotiable contract)")
		amLogTime(t, j.appID, "warning worker:0 in "+container+": YARN may kill it from ")
		var at time.Time
		select {
		case at = <-appeared:
		case <-time.After(10 * time.Second):
			t.Fatalf("the warning file never appeared in %s (inotify)", workdir)
		}
		var a answer
		select {
		case a = <-done:
		case <-time.After(40 * time.Second):
			t.Fatalf("cluster.sh preempt %s did not return", container)
		}
		require.NoError(t, a.err, a.out)
		require.Contains(t, a.out, "preempted "+container+" 5000 ms after announcing it")

		data, err := os.ReadFile(warning)
		require.NoError(t, err)
		var w contract.PreemptionWarning
		require.NoError(t, json.Unmarshal(data, &w), "%s", data)
		require.Equal(t, "worker:0", w.Task)
		require.Equal(t, container, w.Container)
		require.Equal(t, "YARN's scheduler will preempt container "+container+" (negotiable contract: it wants resources back)", w.Reason)
		deadline := time.UnixMilli(w.DeadlineUnixMS)
		fromRFC, err := time.Parse(time.RFC3339, w.Deadline)
		require.NoError(t, err)
		require.Equal(t, w.DeadlineUnixMS, fromRFC.UnixMilli())
		require.False(t, st.ModTime().After(a.at), "warned (file mtime %s) before the kill, done by %s", st.ModTime(), a.at)
		rd := round{container: container, announced: announced, warned: at, deadline: deadline, killed: a.at}
		t.Logf("round %d: %s announced %s, file %s (+%s), deadline %s, killed by %s", r, container,
			announced.Format("15:04:05.000"), rd.warned.Format("15:04:05.000000"), rd.warned.Sub(announced), deadline.Format("15:04:05.000"), a.at.Format("15:04:05.000"))
		// Warned before the kill; the deadline is the cluster's 5 s wait counted from the allocate
		// call before the announcement (at most a heartbeat and a call earlier), never after the
		// kill.
		require.True(t, rd.warned.Before(rd.killed), "warned at %s, killed by %s", rd.warned, rd.killed)
		require.False(t, deadline.After(rd.killed), "deadline %s after the kill %s", deadline, rd.killed)
		require.Greater(t, deadline.Sub(announced), 3*time.Second, "the cluster's 5 s wait, not less")
		require.LessOrEqual(t, deadline.Sub(announced), 5*time.Second, "the cluster's 5 s wait (max_wait_before_kill), not the 15 s default")
		// The file appears after the announcement (the log stamp is cut to the millisecond), at
		// once.
		require.False(t, rd.warned.Before(announced), "the file appeared at %s, before the AM logged the announcement at %s", rd.warned, announced)
		require.Less(t, rd.warned.Sub(announced), 2*time.Second, "the file appears at once")
		rounds = append(rounds, rd)
	}

	j.requireEnd(t, fault, 3*time.Minute, "SUCCEEDED")
	require.Equal(t, n, j.result.Restarts)
	preempted := regexp.MustCompile(`restart \d after worker:0 \(container \S+ on \S+\) failed: preempted by the scheduler \(exit status -102\)[^;]*\(not counted: not the program's fault\)`)
	require.Len(t, preempted.FindAllString(j.result.Diagnostics, -1), n, j.result.Diagnostics)

	// Each run resumed from the checkpoint the one before wrote on its warning.
	data, err := os.ReadFile(runs)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 2*n+2, "%s", data)
	from := 0
	for r := 0; r <= n; r++ {
		require.Regexp(t, fmt.Sprintf(`^run %d from %d in container_`, r, from), lines[2*r], "%s", data)
		if r == n {
			require.Equal(t, fmt.Sprintf("done %d 300", r), lines[2*r+1])
			break
		}
		var rr, step int
		_, err := fmt.Sscanf(lines[2*r+1], "checkpoint %d %d", &rr, &step)
		require.NoError(t, err, "%s", data)
		require.Equal(t, r, rr)
		require.Greater(t, step, from, "run %d made progress before its warning", r)
		require.Contains(t, lines[2*r], rounds[r].container)
		from = step
	}

	if out := os.Getenv("TFYARN_PREEMPTION_RESULTS"); out != "" && !t.Failed() {
		require.NoError(t, writePreemptionResults(out, len(rounds), func(yield func(announced, warned, deadline, killed time.Time)) {
			for _, rd := range rounds {
				yield(rd.announced, rd.warned, rd.deadline, rd.killed)
			}
		}))
	}
}

// amLogLine: "2026-11-25 20:25:57.829 tfyarn am: MESSAGE".
var amLogStamp = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) tfyarn am: `)

// amLogTime is when appID's running AM logged a line containing what.
func amLogTime(t *testing.T, appID, what string) time.Time {
	t.Helper()
	var at time.Time
	var log []byte
	require.Eventually(t, func() bool {
		_, path := findAM(appID)
		if path == "" {
			return false
		}
		log, _ = os.ReadFile(path)
		for _, line := range bytes.Split(log, []byte("\n")) {
			if m := amLogStamp.FindSubmatch(line); m != nil && bytes.Contains(line, []byte(what)) {
				var err error
				at, err = time.ParseInLocation("2006-01-02 15:04:05.000", string(m[1]), time.Local)
				return err == nil
			}
		}
		return false
	}, 10*time.Second, 50*time.Millisecond, "no AM log line with %q:\n%s", what, log)
	return at
}

// watchAppears reports when a file named name is renamed into dir (the launcher writes the
// warning aside, then renames it into place: a file created there under its name directly would
// not count), watched with inotify from now on for at most limit.
func watchAppears(t *testing.T, dir, name string, limit time.Duration) <-chan time.Time {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	require.NoError(t, err)
	_, err = unix.InotifyAddWatch(fd, dir, unix.IN_MOVED_TO)
	if err != nil {
		unix.Close(fd)
		require.NoError(t, err, "watching %s", dir)
	}
	ch := make(chan time.Time, 1)
	go func() {
		defer unix.Close(fd)
		buf := make([]byte, 64<<10)
		end := time.Now().Add(limit)
		for time.Now().Before(end) {
			if n, _ := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 100); n <= 0 {
				continue
			}
			now := time.Now()
			n, err := unix.Read(fd, buf)
			if err != nil {
				continue
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				raw := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				if string(bytes.TrimRight(raw, "\x00")) == name {
					ch <- now
					return
				}
				off += unix.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}()
	return ch
}

func writePreemptionResults(path string, n int, rounds func(yield func(announced, warned, deadline, killed time.Time))) error {
	var b strings.Builder
	var lat []time.Duration
	fmt.Fprintf(&b, "# Preemption warning: from YARN's announcement to the task's file\n\n")
	fmt.Fprintf(&b, "Written by TestE2EPreemptionWarning (cmd/tfyarn/preemption_e2e_test.go) on %s:\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "`TFYARN_PREEMPTION_ROUNDS=%d TFYARN_PREEMPTION_RESULTS=bench/results/preemption.md go test -tags e2e -count=1 -run '^TestE2EPreemptionWarning$' ./cmd/tfyarn`.\n\n", n)
	fmt.Fprintf(&b, "The faults test cluster (MiniYARN, CapacityScheduler) preempts the task's container with `cluster.sh preempt`\n")
	fmt.Fprintf(&b, "(the scheduler's own MARK_CONTAINER_FOR_PREEMPTION, then MARK_CONTAINER_FOR_KILLABLE after the cluster's\n")
	fmt.Fprintf(&b, "max_wait_before_kill, 5 s). *Announced* is the AM's log line written as the allocate response carrying the\n")
	fmt.Fprintf(&b, "PreemptionMessage was read (millisecond stamp); *file appeared* is when the test's inotify watch on the container's\n")
	fmt.Fprintf(&b, "working directory saw the task's launcher rename TFYARN_PREEMPTION_FILE into place, once the AM's warning reached\n")
	fmt.Fprintf(&b, "it over the rendezvous long poll; SIGWINCH follows it. *Deadline* is what the file says; *killed by* is when `cluster.sh preempt`\n")
	fmt.Fprintf(&b, "returned, after the kill. Same machine, one clock. Load average at the start: %s.\n\n", loadAvg())
	fmt.Fprintf(&b, "| round | announced (AM log) | file appeared | announced → file | deadline | file → deadline | killed by |\n|---|---|---|---|---|---|---|\n")
	i := 0
	rounds(func(announced, warned, deadline, killed time.Time) {
		i++
		lat = append(lat, warned.Sub(announced))
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s |\n", i, announced.Format("15:04:05.000"), warned.Format("15:04:05.000000"),
			warned.Sub(announced).Round(100*time.Microsecond), deadline.Format("15:04:05.000"), deadline.Sub(warned).Round(time.Millisecond), killed.Format("15:04:05.000"))
	})
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	if len(lat) > 0 {
		fmt.Fprintf(&b, "\nMedian announced → file: %s (the AM's log stamp is truncated to the millisecond, so a result may\n", lat[len(lat)/2].Round(100*time.Microsecond))
		fmt.Fprintf(&b, "read up to 1 ms long). The deadline is the cluster's 5 s wait counted from the allocate call before the\n")
		fmt.Fprintf(&b, "announcement, the earliest moment the scheduler can have decided: it never falls after the kill.\n")
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// TestE2EPreemptionExamples: the README's two ways to checkpoint on the warning, each preempted
// once on the faults cluster (cluster.sh preempt, killed 5 s after the announcement) under
// --max-restarts 0: examples/preemption_loop.py checkpoints its step and resumes from it;
// examples/preemption_keras.py (Keras BackupAndRestore) backs up at the end of the batch under
// way and resumes at the next batch: here two MultiWorkerMirroredStrategy workers, worker:1
// preempted, both warned (the cluster restarts with it), both backing up at the same batch and
// resuming at the next. Both jobs SUCCEED after one uncounted restart.
func TestE2EPreemptionExamples(t *testing.T) {
	c := clustertest.RequireFaults(t)
	bin := clustertest.BuildTfyarn(t)
	t.Run("loop", func(t *testing.T) {
		t.Parallel()
		ck := clustertest.ContainerDir(t)
		j := startFaultJob(t, c, bin, "--max-restarts", "0", "--worker", "1c,256m", "--",
			"python3", filepath.Join(c.Root, "examples", "preemption_loop.py"), "--checkpoint-dir", ck, "--steps", "200")
		fault := preemptOnceRunning(t, c, j, "worker:0", "worker:0: starting at step 0 of 200 (restart 0)")
		j.requireEnd(t, fault, 2*time.Minute, "SUCCEEDED")
		require.Equal(t, 1, j.result.Restarts)
		require.Regexp(t, `^all 1 tasks succeeded; restart 1 after worker:0 \(container \S+ on \S+\) failed: preempted by the scheduler \(exit status -102\).*\(not counted: not the program's fault\)$`, j.result.Diagnostics)
		logs := appLogs(t, c, j.appID, 3)
		m := regexp.MustCompile(`worker:0: YARN preempts this container from \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z: checkpointed step (\d+)\n`).FindStringSubmatch(logs)
		require.NotNil(t, m, "the first run checkpointed on the warning:\n%s", logs)
		require.Contains(t, logs, "worker:0: starting at step "+m[1]+" of 200 (restart 1)\n", "the restart resumed from the checkpoint")
		require.Contains(t, logs, "worker:0: done at step 200 (total 20100)\n")
	})
	t.Run("keras", func(t *testing.T) {
		t.Parallel()
		python := tfPython(t, c)
		backup := clustertest.ContainerDir(t)
		j := startFaultJob(t, c, bin, "--max-restarts", "0", "--worker", "2x1c,1g", "--python", python,
			filepath.Join(c.Root, "examples", "preemption_keras.py"), "--",
			"--backup-dir", backup, "--epochs", "1", "--steps-per-epoch", "40", "--step-seconds", "0.25")
		fault := preemptOnceRunning(t, c, j, "worker:1", "worker:1: trained from epoch 1 batch 0 (restart 0)")
		j.requireEnd(t, fault, 3*time.Minute, "SUCCEEDED")
		require.Equal(t, 1, j.result.Restarts)
		require.Contains(t, j.result.Diagnostics, "restart 1 after worker:1 (container ")
		require.Contains(t, j.result.Diagnostics, "failed: preempted by the scheduler (exit status -102)")
		logs := appLogs(t, c, j.appID, 5)
		var batch []int
		for _, task := range []string{"worker:0", "worker:1"} {
			m := regexp.MustCompile(task + `: backed up at epoch 1 batch (\d+) \(YARN preempts from \S+\)\n`).FindStringSubmatch(logs)
			require.NotNil(t, m, "%s's first run backed up on the warning:\n%s", task, logs)
			b, err := strconv.Atoi(m[1])
			require.NoError(t, err)
			require.Less(t, b, 39, "backed up mid-epoch, not at its end")
			require.Contains(t, logs, fmt.Sprintf("%s: trained from epoch 1 batch %d (restart 1)\n", task, b+1), "the restart resumed at the next batch")
			require.Contains(t, logs, task+": done, final loss ")
			batch = append(batch, b)
		}
		require.Equal(t, batch[0], batch[1], "the workers backed up together")
	})
}

// preemptOnceRunning waits until the program of j's task printed started, then has the
// cluster preempt its container (announced at once, killed 5 s later); it returns when the
// preemption was asked for.
func preemptOnceRunning(t *testing.T, c *clustertest.Cluster, j *faultJob, task, started string) time.Time {
	t.Helper()
	var out []byte
	var container string
	if !assert.Eventually(t, func() bool {
		out, container = containerStdout(j.appID, task)
		return bytes.Contains(out, []byte(started))
	}, 3*time.Minute, 100*time.Millisecond) {
		t.Fatalf("%s never printed %q; its stdout:\n%s\nrun's stderr:\n%s", task, started, out, j.stderr())
	}
	fault := time.Now()
	require.Contains(t, c.Control(t, "preempt", container), "preempted "+container)
	return fault
}

// containerStdout is what task's container of appID wrote to its stdout log so far (the
// program's output, passed through by its launcher) and the container's id (from its
// launcher's environment: run may not have said yet), nil while no launcher runs.
func containerStdout(appID, task string) ([]byte, string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if !bytes.HasPrefix(cmdline, []byte("./tfyarn\x00task")) {
			continue
		}
		environ, _ := os.ReadFile(filepath.Join(dir, "environ"))
		vars := "\x00" + string(environ)
		if !strings.Contains(vars, "\x00TFYARN_TASK="+task+"\x00") || !strings.Contains(vars, "\x00TFYARN_APP_ID="+appID+"\x00") {
			continue
		}
		if log, err := os.Readlink(filepath.Join(dir, "fd", "1")); err == nil {
			out, _ := os.ReadFile(log)
			_, container, _ := strings.Cut(vars, "\x00CONTAINER_ID=")
			container, _, _ = strings.Cut(container, "\x00")
			return out, container
		}
	}
	return nil, ""
}
