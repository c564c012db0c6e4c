//go:build e2e

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// An elastic PyTorch job (--min-workers), on YARN and --local, starts with
// --min-workers of its workers and grows when the last comes; then it loses
// a worker mid-training: the others go on without it, the AM replaces it,
// the replacement's torchrun joins the same rendezvous and the job grows
// back to its 3 workers, and succeeds. The rendezvous store is the
// ApplicationMaster's, so it does not matter which worker is lost; worker:0
// is, whose launcher serves the store of a job that is not elastic.
//
//	go test -tags e2e -run E2EPyTorchElastic ./cmd/tfyarn/
func TestE2EPyTorchElastic(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	python := frameworkPython(t, c, "pytorch")
	t.Run("yarn", func(t *testing.T) { t.Parallel(); testElasticLosesAWorker(t, c, bin, python, false) })
	t.Run("local", func(t *testing.T) { t.Parallel(); testElasticLosesAWorker(t, c, bin, python, true) })
}

// lastCall is the elastic tests' --elastic-last-call: torch's default 30 s
// would be waited at the start and after the loss, a minute of each test.
const lastCall = 5 * time.Second

func testElasticLosesAWorker(t *testing.T, c *clustertest.Cluster, bin, python string, local bool) {
	// The containers write their steps here: as the submitting user
	// (alice) on a cluster that runs containers as their users.
	progress := clustertest.ContainerDir(t)
	args := []string{"run", "--framework", "pytorch", "--worker", "3x1c,1536m", "--min-workers", "2", "--elastic-last-call", lastCall.String(), "--python", python, "--output", "json"}
	if local {
		args = append(args, "--local")
	} else {
		args = append(args, "--name", "e2e-pytorch-elastic")
	}
	// At most 500 s of steps: the survivors step on as a world of 2 while
	// worker:2 and later the replacement come (at load 30 on 2 cores the
	// replacement trained at steps 43-109), and once the job has grown back
	// the test ends it with the stop file: every rank ends at the next step.
	const steps = 1000
	stopFile := filepath.Join(progress, "stop")
	args = append(args, filepath.Join(c.Root, "examples", "pytorch_elastic.py"), "--", "--steps", strconv.Itoa(steps), "--step-seconds", "0.5", "--progress-dir", progress, "--stop-file", stopFile)
	run := startTfyarn(t, c, bin, 8*time.Minute, args...)
	started := time.Now()

	// The job starts with --min-workers: worker:2's torchrun is held
	// (SIGSTOP) as soon as it starts, before it has imported torch and
	// joined the rendezvous, as a worker whose container comes late; the
	// two others' agents meet, wait the last call for more
	// (--elastic-last-call, torch's 30 s by default), and train as a world
	// of 2 (restart 0: the first round, no failure).
	late := holdNewAgent(progress, "worker:2", nil, 4*time.Minute)
	for {
		_, ok0 := stepAtLeast(filepath.Join(progress, "worker-0.local0.step"), 2)
		_, ok1 := stepAtLeast(filepath.Join(progress, "worker-1.local0.step"), 2)
		if ok0 && ok1 {
			break
		}
		require.True(t, time.Since(started) < 4*time.Minute, "worker:0 and worker:1 did not train without worker:2 within 4 minutes (progress files in %s)", progress)
		time.Sleep(250 * time.Millisecond)
	}
	_, err := os.Stat(filepath.Join(progress, "worker-2.local0.step"))
	require.True(t, os.IsNotExist(err), "worker:2 trained while its torchrun was held: %v", err)
	first, ok := <-late
	require.True(t, ok, "worker:2's torchrun did not start within 4 minutes")
	t.Logf("worker:0 and worker:1 train as 2 workers %.1fs after the submission, worker:2's torchrun held since %.1fs", time.Since(started).Seconds(), first.after.Seconds())
	require.NoError(t, syscall.Kill(first.pid, syscall.SIGCONT))
	grow := time.Now()

	// Mid-training: every worker past step 3. Then worker:0's torchrun and
	// its process die at once, as in a lost container.
	victim := filepath.Join(progress, "worker-0.local0.step")
	deadline := time.Now().Add(4 * time.Minute)
	var pid, agent int
	for {
		ready := 0
		for _, w := range []string{"worker-0", "worker-1", "worker-2"} {
			if step, p, pp, ok := readStep(filepath.Join(progress, w+".local0.step")); ok && step >= 3 {
				ready++
				if w == "worker-0" {
					pid, agent = p, pp
				}
			}
		}
		if ready == 3 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the workers did not all reach step 3 within 4 minutes (progress files in %s)", progress)
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("the job grew to 3 workers %.1fs after worker:2's torchrun was let go", time.Since(grow).Seconds())
	old := processesOf(progress, "worker:0")
	require.NoError(t, syscall.Kill(agent, syscall.SIGKILL), "worker:0's torchrun")
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL), "worker:0's training process")
	killedAt, _, _, _ := readStep(victim)
	killed := time.Now()

	// The AM replaces worker:0 within seconds, inside the last call the
	// agents wait for more members once --min-workers have met again: the
	// new round would have all 3 at once, and the survivors would never be
	// seen going on without it. So the replacement's torchrun is held
	// (SIGSTOP) as soon as it starts, long before it has imported torch and
	// joined the rendezvous, and let go once the survivors train without
	// it: then it joins a running job, the path a replacement that comes
	// late takes.
	held := holdNewAgent(progress, "worker:0", old, 4*time.Minute)

	// How long the survivors take to train again: a step past the one the
	// lost worker died at (the new round starts from the furthest step).
	for {
		if step, _, _, ok := readStep(filepath.Join(progress, "worker-1.local0.step")); ok && step > killedAt+1 {
			t.Logf("the survivors trained again %.1fs after worker:0 was killed (at step %d)", time.Since(killed).Seconds(), killedAt)
			break
		}
		require.True(t, time.Since(killed) < 4*time.Minute, "the survivors did not train again within 4 minutes of the kill")
		time.Sleep(250 * time.Millisecond)
	}
	replacement, ok := <-held
	require.True(t, ok, "worker:0's replacement did not start within 4 minutes of the kill")
	t.Logf("worker:0's replacement started its torchrun %.1fs after the kill (held until now, %.1fs after it)", replacement.after.Seconds(), time.Since(killed).Seconds())
	require.NoError(t, syscall.Kill(replacement.pid, syscall.SIGCONT))
	released := time.Now()
	// How long the job takes to grow back: worker:0's replacement trains,
	// which it can only in a round with the others (world size 3 again).
	for {
		if step, p, _, ok := readStep(victim); ok && p != pid && step > killedAt {
			t.Logf("the job grew back to 3 workers %.1fs after worker:0's replacement was let go (%.1fs after the kill; it trains at step %d)",
				time.Since(released).Seconds(), time.Since(killed).Seconds(), step)
			break
		}
		require.True(t, time.Since(killed) < 4*time.Minute, "worker:0's replacement did not train within 4 minutes of the kill")
		time.Sleep(250 * time.Millisecond)
	}
	require.NoError(t, os.WriteFile(stopFile, nil, 0o644))

	code := run.wait(t, 6*time.Minute)
	stdout := run.stdout.String()
	require.Equal(t, exitOK, code, "stderr: %s", &run.stderr)
	var r client.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &r), stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	require.Regexp(t, `^3 of 3 workers succeeded; replaced after worker:0 `, r.Diagnostics)

	logs := run.stderr.String()
	if !local {
		logs = aggregatedLogs(t, c, bin, r.AppID)
	}
	// Every launcher started torchrun with the job's last call.
	require.Regexp(t, `tfyarn task worker:2: worker:2 at \S+, elastic torchrun node, 2 to 3 nodes, .*, last call 5s`, logs)
	// The job started as a world of 2, without worker:2: its first round
	// (restart 0, no failure yet) had two members.
	require.Regexp(t, `rank [01] of 2 \(restart 0\)`, logs)
	// The survivors started again, two of them, then grew back to three
	// with the replacement (their processes started again in a world of
	// 3: a member joining is no restart to torchrun's count) and all three
	// finished together, at the same step, past the one worker:0 was lost at.
	require.Regexp(t, `rank [01] of 2 \(restart [1-9]\)`, logs)
	require.Regexp(t, `rank [012] of 3 \(restart [1-9]\)`, logs)
	finished := regexp.MustCompile(`rank ([012]) of 3 finished at step ([0-9]+) \(restart [0-9]+\)`).FindAllStringSubmatch(logs, -1)
	ranks, at := map[string]bool{}, map[string]bool{}
	for _, m := range finished {
		ranks[m[1]], at[m[2]] = true, true
	}
	require.Len(t, ranks, 3, "the survivors and the replacement finished:\n%s", logs)
	require.Len(t, at, 1, "every rank finished at the same step:\n%s", logs)
	last, _, _, _ := readStep(filepath.Join(progress, "worker-1.local0.step"))
	require.Greater(t, last, killedAt, "the job trained on past the loss")
	for _, w := range []string{"worker-0", "worker-1", "worker-2"} {
		step, p, _, ok := readStep(filepath.Join(progress, w+".local0.step"))
		require.True(t, ok)
		require.Equal(t, last, step, w)
		if w == "worker-0" {
			require.NotEqual(t, pid, p, "worker:0's last step is its replacement's")
		}
	}
}

// heldAgent is a torchrun held by holdNewAgent: its pid, and when it was
// held, from the call.
type heldAgent struct {
	pid   int
	after time.Duration
}

// holdNewAgent stops (SIGSTOP) the first process of task (processesOf)
// not in old as soon as it appears, which is its torchrun, long before
// that has imported torch and joined the rendezvous; the channel gets it,
// or is closed when none appeared within limit.
func holdNewAgent(progress, task string, old map[int]bool, limit time.Duration) <-chan heldAgent {
	held := make(chan heldAgent, 1)
	start := time.Now()
	go func() {
		for time.Since(start) < limit {
			for p := range processesOf(progress, task) {
				if !old[p] && syscall.Kill(p, syscall.SIGSTOP) == nil {
					held <- heldAgent{p, time.Since(start)}
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		close(held)
	}()
	return held
}

// stepAtLeast reads a progress file's step, ok when it is at least n.
func stepAtLeast(path string, n int) (int, bool) {
	step, _, _, ok := readStep(path)
	return step, ok && step >= n
}

// processesOf returns the processes of one task of the pytorch_elastic.py
// job whose progress directory is progress: its environment names the task
// and its command line the directory (torchrun and its processes; not the
// launcher).
func processesOf(progress, task string) map[int]bool {
	out := map[int]bool{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if !strings.Contains(string(cmdline), progress) {
			continue
		}
		environ, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if strings.Contains("\x00"+string(environ), "\x00TFYARN_TASK="+task+"\x00") {
			out[p] = true
		}
	}
	return out
}

// readStep reads a pytorch_elastic.py progress file: step, pid, parent pid.
func readStep(path string) (step, pid, ppid int, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(data))
	if len(f) != 3 {
		return 0, 0, 0, false
	}
	var errs [3]error
	step, errs[0] = strconv.Atoi(f[0])
	pid, errs[1] = strconv.Atoi(f[1])
	ppid, errs[2] = strconv.Atoi(f[2])
	return step, pid, ppid, errs[0] == nil && errs[1] == nil && errs[2] == nil
}
