//go:build e2e

package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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

// Distributed XGBoost (--framework xgboost) end to end on the pinned
// xgboost-cpu of .venv-xgboost (scripts/tfenv.sh xgboost):
// examples/xgboost_dist.py, whose workers join the tracker the
// ApplicationMaster serves, on the plain cluster and --local.
//
//	go test -tags e2e -run 'E2EXGBoost|E2ELightGBM' ./cmd/tfyarn/
//
// While the job on YARN starts, a stranger (the test, which holds no secret
// of the job's) connects to the tracker's port: with no task id, a forged
// token, a print, and no XGBoost at all. Each connection is closed without
// a word, the AM's log counts them and holds none of the stranger's
// lines, and the job's workers form their collective all the same.
func TestE2EXGBoost(t *testing.T) {
	testGradientBoosting(t, "xgboost", "xgboost_dist.py", func(t *testing.T, logs string, n int) {
		for i := range n {
			// XGBoost's own line: the tracker gave worker:i rank i.
			require.Regexp(t, fmt.Sprintf(`Task worker:%d:[0-9a-f]{32} got rank %d`, i, i), logs)
		}
	}, attackTracker)
}

// trackerLine is the AM's line naming the tracker's address.
var trackerLine = regexp.MustCompile(`the job's side service \(xgboost\) at (\S+)`)

// attackTracker connects to appID's tracker as a stranger, as soon as the
// AM names its address, and returns a check of the AM's log for after the
// job.
func attackTracker(t *testing.T, appID string) func(t *testing.T, logs string) {
	var addr string
	require.Eventually(t, func() bool {
		_, log := findAM(appID)
		data, _ := os.ReadFile(log)
		if m := trackerLine.FindSubmatch(data); m != nil {
			addr = string(m[1])
		}
		return addr != ""
	}, 2*time.Minute, 50*time.Millisecond, "the AM of %s never named its tracker", appID)
	start := time.Now()
	hello := func(taskID string, cmd map[string]any) []byte {
		out := binary.LittleEndian.AppendUint32(nil, 0xff99)
		for _, m := range []map[string]any{{"world_size": -1, "rank": 0, "task_id": taskID}, cmd} {
			body, err := json.Marshal(m)
			require.NoError(t, err)
			out = append(binary.LittleEndian.AppendUint32(out, uint32(len(body))), body...)
		}
		return out
	}
	startCmd := map[string]any{"cmd": 1, "port": 9, "error_port": 10}
	forged := "worker:0:" + strings.Repeat("0", 32)
	for _, c := range []struct {
		what  string
		send  []byte
		reply int // bytes the tracker sends before it closes: its magic number, or nothing
	}{
		{"no task id", hello("", startCmd), 4},
		{"a forged token", hello(forged, startCmd), 4},
		{"a stranger's print", hello("worker:1", map[string]any{"cmd": 4, "msg": "a stranger's line"}), 4},
		{"not XGBoost", []byte("GET / HTTP/1.0\r\n\r\n"), 0},
	} {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err, c.what)
		_, err = conn.Write(c.send)
		require.NoError(t, err, c.what)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		got, err := io.ReadAll(conn)
		conn.Close()
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "%s: the tracker kept the connection open", c.what)
		require.Len(t, got, c.reply, "%s: what the tracker said", c.what)
	}
	t.Logf("4 strangers' connections to the tracker at %s refused in %.2f s", addr, time.Since(start).Seconds())
	return func(t *testing.T, logs string) {
		am := amLogOf(logs)
		require.Equal(t, 4, strings.Count(am, "xgboost tracker: refused from "), am)
		for _, reason := range []string{"a task_id not of the job's form", "a task_id whose token does not verify", "not an XGBoost worker"} {
			require.Contains(t, am, reason)
		}
		require.NotContains(t, am, "a stranger's line")
		require.Contains(t, am, "xgboost tracker: the collective of 3 workers started (ranks 0=worker:0, 1=worker:1, 2=worker:2)")
		doc := strings.Join(strings.Fields(clustertest.DocSection(t, "### Who the tracker hears")), " ")
		require.Contains(t, doc, "The tracker closes any other connection at once, without a word")
		require.Contains(t, doc, "XGBoost prints the task id, token included, in the task's log (`Task worker:0:TOKEN got rank 0`).")
	}
}

// Distributed LightGBM (--framework lightgbm) end to end:
// examples/lightgbm_dist.py, data-parallel, each worker listening on its
// reserved port.
func TestE2ELightGBM(t *testing.T) {
	testGradientBoosting(t, "lightgbm", "lightgbm_dist.py", func(t *testing.T, logs string, n int) {
		require.Contains(t, logs, fmt.Sprintf("total number of machines: %d", n))
	}, nil)
}

// testGradientBoosting runs a gradient-boosting example: three workers on
// YARN train one model (every worker prints the same checksum), a worker
// that fails fails the job with its reason, and --local. attack, if any,
// runs while the three workers' job does, and gives a check of its logs.
func testGradientBoosting(t *testing.T, framework, script string, check func(t *testing.T, logs string, n int), attack func(t *testing.T, appID string) func(t *testing.T, logs string)) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	python := frameworkPython(t, c, "xgboost")
	example := filepath.Join(c.Root, "examples", script)
	t.Run("3 workers", func(t *testing.T) {
		t.Parallel()
		args := []string{"--framework", framework, "--worker", "3x1c,768m", "--python", python, example}
		var r client.Result
		after := func(*testing.T, string) {}
		if attack == nil {
			stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, nil, append([]string{"run", "--name", "e2e-" + framework, "--output", "json"}, args...)...)
			require.Equal(t, exitOK, code, stderr)
			r = runJSON(t, stdout)
		} else {
			j := startFaultJob(t, c, bin, args...)
			after = attack(t, j.appID)
			select {
			case <-j.exited:
			case <-time.After(4 * time.Minute):
				t.Fatalf("the job did not end: %s", j.stderr())
			}
			r = runJSON(t, j.stdout.String())
		}
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		require.Equal(t, "all 3 tasks succeeded", r.Diagnostics)
		logs := aggregatedLogs(t, c, bin, r.AppID)
		requireOneModel(t, logs, 3)
		check(t, logs, 3)
		after(t, logs)
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
