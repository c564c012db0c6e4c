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

// An elastic PyTorch job (--min-workers) loses a worker mid-training, on
// YARN and --local: the others go on without it and the job succeeds. The rendezvous store is the
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

func testElasticLosesAWorker(t *testing.T, c *clustertest.Cluster, bin, python string, local bool) {
	progress := t.TempDir()
	require.NoError(t, os.Chmod(progress, 0o777))
	args := []string{"run", "--framework", "pytorch", "--worker", "3x1c,1536m", "--min-workers", "2", "--python", python, "--output", "json"}
	if local {
		args = append(args, "--local")
	} else {
		args = append(args, "--name", "e2e-pytorch-elastic")
	}
	args = append(args, filepath.Join(c.Root, "examples", "pytorch_elastic.py"), "--", "--steps", "40", "--step-seconds", "0.5", "--progress-dir", progress)
	run := startTfyarn(t, c, bin, 8*time.Minute, args...)

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
	require.NoError(t, syscall.Kill(agent, syscall.SIGKILL), "worker:0's torchrun")
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL), "worker:0's training process")
	killedAt, _, _, _ := readStep(victim)
	killed := time.Now()

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

	code := run.wait(t, 6*time.Minute)
	stdout := run.stdout.String()
	require.Equal(t, exitOK, code, "stderr: %s", &run.stderr)
	var r client.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &r), stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	require.Regexp(t, `^2 of 3 workers succeeded; lost on the way: worker:0 `, r.Diagnostics)

	logs := run.stderr.String()
	if !local {
		logs = aggregatedLogs(t, c, bin, r.AppID)
	}
	// The survivors started again, two of them, and finished all 40 steps.
	require.Regexp(t, `rank [01] of 2 \(restart [1-9]\)`, logs)
	finished := regexp.MustCompile(`rank ([01]) of 2 finished at step 40 \(restart [1-9]\)`).FindAllStringSubmatch(logs, -1)
	ranks := map[string]bool{}
	for _, m := range finished {
		ranks[m[1]] = true
	}
	require.Len(t, ranks, 2, "both survivors finished:\n%s", logs)
	for _, w := range []string{"worker-1", "worker-2"} {
		step, _, _, ok := readStep(filepath.Join(progress, w+".local0.step"))
		require.True(t, ok)
		require.Equal(t, 40, step, w)
	}
	step, _, _, _ := readStep(victim)
	require.Equal(t, killedAt, step, "the lost worker did not come back")
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
