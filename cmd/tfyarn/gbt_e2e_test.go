//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// Distributed XGBoost (--framework xgboost) end to end on the pinned
// xgboost-cpu of .venv-xgboost (scripts/tfenv.sh xgboost):
// examples/xgboost_dist.py, whose workers join the tracker the
// ApplicationMaster serves, on the plain cluster and --local.
//
//	go test -tags e2e -run 'E2EXGBoost|E2ELightGBM' ./cmd/tfyarn/
func TestE2EXGBoost(t *testing.T) {
	testGradientBoosting(t, "xgboost", "xgboost_dist.py", func(t *testing.T, logs string, n int) {
		for i := range n {
			// XGBoost's own line: the tracker gave worker:i rank i.
			require.Contains(t, logs, fmt.Sprintf("Task worker:%d got rank %d", i, i))
		}
	})
}

// Distributed LightGBM (--framework lightgbm) end to end:
// examples/lightgbm_dist.py, data-parallel, each worker listening on its
// reserved port.
func TestE2ELightGBM(t *testing.T) {
	testGradientBoosting(t, "lightgbm", "lightgbm_dist.py", func(t *testing.T, logs string, n int) {
		require.Contains(t, logs, fmt.Sprintf("total number of machines: %d", n))
	})
}

// testGradientBoosting runs a gradient-boosting example: three workers on
// YARN train one model (every worker prints the same checksum), a worker
// that fails fails the job with its reason, and --local.
func testGradientBoosting(t *testing.T, framework, script string, check func(t *testing.T, logs string, n int)) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	python := frameworkPython(t, c, "xgboost")
	example := filepath.Join(c.Root, "examples", script)
	t.Run("3 workers", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, nil, "run", "--name", "e2e-"+framework,
			"--framework", framework, "--worker", "3x1c,768m", "--python", python, "--output", "json", example)
		require.Equal(t, exitOK, code, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		require.Equal(t, "all 3 tasks succeeded", r.Diagnostics)
		logs := aggregatedLogs(t, c, bin, r.AppID)
		requireOneModel(t, logs, 3)
		check(t, logs, 3)
	})
	t.Run("a worker fails", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, nil, "run", "--name", "e2e-"+framework+"-fails",
			"--framework", framework, "--worker", "2x1c,768m", "--python", python, "--output", "json", example, "--", "--fail-worker", "1")
		require.Equal(t, exitJobFailed, code, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "FAILED", r.FinalStatus)
		require.Regexp(t, `^worker:1 \(container \S+ on \S+\) failed: exit code 3; last stderr of worker:1: worker:1: failing on purpose \(--fail-worker\)`, r.Diagnostics)
	})
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, nil, "run", "--local",
			"--framework", framework, "--worker", "3x1c", "--python", python, "--output", "json", example)
		require.Equal(t, exitOK, code, stderr)
		var r client.Result
		require.NoError(t, json.Unmarshal([]byte(stdout), &r), stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		requireOneModel(t, stderr, 3)
		check(t, stderr, 3)
	})
}

// requireOneModel finds "worker R of N: model checksum C" for every worker,
// with the same C: they hold one model.
func requireOneModel(t *testing.T, out string, n int) {
	t.Helper()
	ranks, sums := map[string]bool{}, map[string]bool{}
	for _, m := range regexp.MustCompile(`worker (\d+) of (\d+): model checksum (\S+)`).FindAllStringSubmatch(out, -1) {
		require.Equal(t, strconv.Itoa(n), m[2], m[0])
		ranks[m[1]], sums[m[3]] = true, true
	}
	require.Len(t, ranks, n, "every worker printed its model's checksum:\n%s", out)
	require.Len(t, sums, 1, "the workers hold one model:\n%s", out)
}
