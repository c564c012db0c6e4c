//go:build e2e

package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// JAX jobs end to end (--framework jax) on the pinned jax[cpu] of .venv-jax
// (scripts/tfenv.sh jax): examples/jax_psum.py, whose
// jax.distributed.initialize() has no arguments, on the plain cluster and
// --local.
//
//	go test -tags e2e -run E2EJAX ./cmd/tfyarn/
func TestE2EJAX(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	python := frameworkPython(t, c, "jax")
	example := filepath.Join(c.Root, "examples", "jax_psum.py")
	t.Run("psum", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, nil, "run", "--name", "e2e-jax-psum",
			"--framework", "jax", "--worker", "2x1c,1g", "--python", python, "--output", "json", example)
		require.Equal(t, exitOK, code, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		require.Equal(t, "all 2 tasks succeeded", r.Diagnostics)
		logs := aggregatedLogs(t, c, bin, r.AppID)
		requirePsum(t, logs, 2)
		// worker:0's launcher held its port until JAX's coordination service
		// listened on it.
		require.Regexp(t, `tfyarn task worker:0: the program listens on port \d+: released the reservation`, logs)
	})
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, nil, "run", "--local",
			"--framework", "jax", "--worker", "3x1c", "--python", python, "--output", "json", example)
		require.Equal(t, exitOK, code, stderr)
		var r client.Result
		require.NoError(t, json.Unmarshal([]byte(stdout), &r), stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		requirePsum(t, stderr, 3)
	})
}

// requirePsum finds "process P of N" for every process and each one's psum
// of P+1 over all: N(N+1)/2.
func requirePsum(t *testing.T, out string, n int) {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`process (\d+) of (\d+) \(`).FindAllStringSubmatch(out, -1) {
		require.Equal(t, strconv.Itoa(n), m[2], m[0])
		seen[m[1]] = true
	}
	require.Len(t, seen, n, "every process printed itself:\n%s", out)
	sums := regexp.MustCompile(`process \d+ psum (\S+)`).FindAllStringSubmatch(out, -1)
	require.Len(t, sums, n, "every process printed its psum:\n%s", out)
	for _, m := range sums {
		require.Equal(t, strconv.Itoa(n*(n+1)/2)+".0", m[1])
	}
}
