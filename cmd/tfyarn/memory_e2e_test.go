//go:build e2e

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// The test cluster enforces physical memory like a production cluster: a
// task that touches 700 MiB in a 256 MiB container is killed by its
// NodeManager (exit status -104) and the job fails naming the task and why.
//
//	go test -tags e2e -run E2EMemoryLimit ./cmd/tfyarn/
func TestE2EMemoryLimit(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	program := `import time; b = b"x" * (700 << 20); time.sleep(120)`
	start := time.Now()
	stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, nil, "run", "--worker", "1c,256m",
		"--name", "e2e-memory-limit", "--output", "json", "--", "python3", "-c", program)
	took := time.Since(start)
	t.Logf("%.1fs\nstdout: %s\nstderr: %s", took.Seconds(), stdout, stderr)
	r := runJSON(t, stdout)
	require.Equal(t, exitJobFailed, code)
	require.Equal(t, "FAILED", r.FinalStatus)
	require.Contains(t, r.Diagnostics, "worker:0")
	require.Contains(t, r.Diagnostics, "exceeding its physical memory limit", r.Diagnostics)
	// Killed by the NodeManager's monitor within seconds, long before the program's own 120 s.
	require.Less(t, took, 90*time.Second)
	require.True(t, strings.Contains(r.Diagnostics, "-104"), r.Diagnostics)
	requireNoStaging(t, c, r.AppID)
	requireNoContainerProcess(t, r.AppID)
}
