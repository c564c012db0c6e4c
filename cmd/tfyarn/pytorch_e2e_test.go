//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// PyTorch jobs end to end (--framework pytorch) on the pinned CPU torch of
// .venv-pytorch (scripts/tfenv.sh pytorch): examples/pytorch_ddp.py under
// torchrun in every worker container, on the plain cluster and --local.
//
//	go test -tags e2e -run E2EPyTorch ./cmd/tfyarn/
func TestE2EPyTorch(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	python := frameworkPython(t, c, "pytorch")
	example := filepath.Join(c.Root, "examples", "pytorch_ddp.py")
	// The two cluster jobs run one after the other: a container of torchrun
	// and two processes peaks near 2 GiB of RSS (YARN sums the processes'),
	// and the plain cluster has one 8 GiB node for the default queue.
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarnFor(t, c, bin, 6*time.Minute, nil, "run", "--local",
			"--framework", "pytorch", "--worker", "2x1c", "--nproc-per-node", "2", "--python", python,
			"--output", "json", example, "--", "--steps", "3")
		require.Equal(t, exitOK, code, stderr)
		var r client.Result
		require.NoError(t, json.Unmarshal([]byte(stdout), &r), stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		requireDDPRanks(t, stderr, 4)
	})
	t.Run("ddp", func(t *testing.T) {
		stdout, stderr, code := execTfyarnFor(t, c, bin, 6*time.Minute, nil, "run", "--name", "e2e-pytorch-ddp",
			"--framework", "pytorch", "--worker", "2x1c,2560m", "--nproc-per-node", "2", "--python", python,
			"--output", "json", example, "--", "--steps", "3")
		require.Equal(t, exitOK, code, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		require.Equal(t, "all 2 tasks succeeded", r.Diagnostics)
		logs := aggregatedLogs(t, c, bin, r.AppID)
		requireDDPRanks(t, logs, 4)
		// torchrun's variables, from torchrun itself, in every process.
		require.Contains(t, logs, "local rank 1 of 2")
	})
	t.Run("a process fails", func(t *testing.T) {
		script := filepath.Join(t.TempDir(), "fails.py")
		require.NoError(t, os.WriteFile(script, []byte(`import os, sys, time
import torch.distributed as dist
dist.init_process_group("gloo")
# One write per line: the two processes share the container's stdout, unbuffered.
sys.stdout.write(f"rank {dist.get_rank()} of {dist.get_world_size()}\n")
sys.stdout.flush()
if dist.get_rank() == 1:
    sys.exit(7)
time.sleep(600)
`), 0o644))
		start := time.Now()
		stdout, stderr, code := execTfyarnFor(t, c, bin, 6*time.Minute, nil, "run", "--name", "e2e-pytorch-fails",
			"--framework", "pytorch", "--worker", "1c,2560m", "--nproc-per-node", "2", "--python", python,
			"--output", "json", script)
		require.Equal(t, exitJobFailed, code, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "FAILED", r.FinalStatus)
		// torchrun ended its other process and exited 1.
		require.Regexp(t, `^worker:0 \(container \S+ on \S+\) failed: exit code 1; last stderr of worker:0: `, r.Diagnostics)
		// Fail fast: the other processes would sleep for 10 minutes.
		require.Less(t, time.Since(start), 5*time.Minute)
		require.Contains(t, aggregatedLogs(t, c, bin, r.AppID), "rank 1 of 2")
	})
}

// requireDDPRanks finds "rank R of W" for every rank of world processes in
// out, and their all-reduced checksums, equal on every rank.
func requireDDPRanks(t *testing.T, out string, world int) {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`rank (\d+) of (\d+) \(`).FindAllStringSubmatch(out, -1) {
		require.Equal(t, strconv.Itoa(world), m[2], m[0])
		seen[m[1]] = true
	}
	require.Len(t, seen, world, "every rank printed itself:\n%s", out)
	sums := map[string]bool{}
	ranks := map[string]bool{}
	for _, m := range regexp.MustCompile(`rank (\d+) checksum (\S+) `).FindAllStringSubmatch(out, -1) {
		ranks[m[1]] = true
		sums[m[2]] = true
	}
	require.Len(t, ranks, world, "every rank printed its checksum:\n%s", out)
	require.Len(t, sums, 1, "the ranks agree on the checksum:\n%s", out)
}

// aggregatedLogs is every task's output of an ended application, from
// `tfyarn logs` once YARN has aggregated it.
func aggregatedLogs(t *testing.T, c *clustertest.Cluster, bin, appID string) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, errOut, code := execTfyarn(t, c, bin, nil, "logs", appID)
		if code == 0 && !strings.Contains(errOut, "still running") {
			return out
		}
		require.Regexp(t, `still aggregating|still running`, errOut, "the only reason to wait")
		if time.Now().After(deadline) {
			t.Fatalf("the logs of %s were not aggregated within 2 minutes: %s", appID, errOut)
		}
		time.Sleep(2 * time.Second)
	}
}

// frameworkPython makes (or finds) the pinned environment of a framework
// (scripts/tfenv.sh pytorch|jax) and returns its python.
func frameworkPython(t *testing.T, c *clustertest.Cluster, kind string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", filepath.Join(c.Root, "scripts", "tfenv.sh"), kind).CombinedOutput()
	require.NoError(t, err, "scripts/tfenv.sh %s: %s", kind, out)
	return filepath.Join(c.Root, ".venv-"+kind, "bin", "python")
}
