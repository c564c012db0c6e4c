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
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
)

// TensorFlow-shaped jobs end to end on the plain cluster: first with sh
// programs (fast, no TensorFlow), then with the examples on the pinned
// TensorFlow of .venv (scripts/tfenv.sh).
//
//	go test -tags e2e -run E2ETF ./cmd/tfyarn/
func TestE2ETF(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	t.Run("shape", func(t *testing.T) {
		t.Parallel()
		t.Run("chief decides", func(t *testing.T) { testChiefDecides(t, c, bin) })
		t.Run("chief fails", func(t *testing.T) { testChiefFails(t, c, bin) })
	})
	t.Run("tensorflow", func(t *testing.T) {
		t.Parallel()
		python := tfPython(t, c)
		t.Run("mwms", func(t *testing.T) { testMWMS(t, c, bin, python) })
		t.Run("pss", func(t *testing.T) { testPSS(t, c, bin, python) })
		t.Run("raises", func(t *testing.T) { testScriptRaises(t, c, bin, python) })
	})
}

// A chief that exits 0 after 2 s decides the job: the workers, the ps and
// the evaluator, which would sleep for 10 minutes, are stopped and the
// application ends within 30 s of the chief's exit.
func testChiefDecides(t *testing.T, c *clustertest.Cluster, bin string) {
	dir := clustertest.ContainerDir(t)
	program := `echo "TF_CONFIG=$TF_CONFIG"; env | grep '^TFYARN_' | sed 's/^/ENV /';` +
		` cp "$HADOOP_TOKEN_FILE_LOCATION" ` + dir + `/$TFYARN_TASK_TYPE$TFYARN_TASK_INDEX.tokens;` +
		` cp container_tokens ` + dir + `/$TFYARN_TASK_TYPE$TFYARN_TASK_INDEX.yarn-tokens;` +
		` if [ "$TFYARN_TASK" = chief:0 ]; then sleep 2; date +CHIEF_EXIT=%s%3N; exit 0; fi; exec sleep 600`
	start := time.Now()
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--name", "e2e-tf-shape",
		"--chief", "1c,128m", "--worker", "2x1c,128m", "--ps", "1c,128m", "--evaluator", "1c,128m",
		"--output", "json", "--", "sh", "-c", program)
	t.Logf("%.1fs\nstdout: %s\nstderr: %s", time.Since(start).Seconds(), stdout, stderr)
	require.Equal(t, exitOK, code)
	r := runJSON(t, stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	require.Equal(t, "chief:0 succeeded; stopped worker:0, worker:1, ps:0, evaluator:0 after it", r.Diagnostics)

	// The task table, from the AM's status page.
	require.Len(t, r.Tasks, 5)
	addrs := map[string]string{}
	for _, task := range r.Tasks {
		require.NotEmpty(t, task.Host, task.Task)
		require.NotZero(t, task.Port, task.Task)
		require.Regexp(t, `^container_\d+_\d+_\d+_\d+$`, task.ContainerID)
		require.NotNil(t, task.ExitCode, task.Task)
		want := "stopped"
		if task.Task == "chief:0" {
			want = "succeeded"
		}
		require.Equal(t, want, task.State, task.Task)
		addrs[task.Task] = task.Host + ":" + strconv.Itoa(task.Port)
	}
	require.Contains(t, stderr, "chief:0 registered at "+addrs["chief:0"])
	require.Contains(t, stderr, "chief:0 succeeded (exit code 0)")

	logs := appLogs(t, c, r.AppID, 6) // the AM's and 5 tasks'
	// Every task saw every cluster address in its TF_CONFIG.
	configs := regexp.MustCompile(`(?m)^TF_CONFIG=(.*)$`).FindAllStringSubmatch(logs, -1)
	require.Len(t, configs, 5, logs)
	for _, m := range configs {
		var tc struct {
			Cluster map[string][]string `json:"cluster"`
			Task    struct {
				Type  string `json:"type"`
				Index int    `json:"index"`
			} `json:"task"`
		}
		require.NoError(t, json.Unmarshal([]byte(m[1]), &tc), m[1])
		require.Equal(t, map[string][]string{
			"chief":  {addrs["chief:0"]},
			"worker": {addrs["worker:0"], addrs["worker:1"]},
			"ps":     {addrs["ps:0"]},
		}, tc.Cluster, "the evaluator is in no cluster list")
	}

	// Within 30 s of the chief's exit, the application is over.
	exit := regexp.MustCompile(`CHIEF_EXIT=(\d+)`).FindStringSubmatch(logs)
	require.NotNil(t, exit, "the chief's exit time")
	chiefExit, _ := strconv.ParseInt(exit[1], 10, 64)
	v := statusJSON(t, c, r.AppID)
	took := time.Duration(v.FinishTimeMS-chiefExit) * time.Millisecond
	t.Logf("the application finished %s after the chief's exit", took)
	require.Less(t, took, 30*time.Second)

	// The rendezvous secret reached the launchers in their containers'
	// credentials, but the program sees neither it nor the AMRMToken: not in
	// the token file it is given, not in YARN's file beside it (the launcher
	// rewrites that one without the secret before the program starts).
	for _, f := range []string{"chief0.tokens", "chief0.yarn-tokens"} {
		creds, err := security.ReadCredentialsFile(filepath.Join(dir, f))
		require.NoError(t, err, f)
		require.Empty(t, creds.TokensOfKind(security.KindAMRMToken), f)
		_, err = rendezvous.SecretFrom(creds)
		require.Error(t, err, "%s holds the rendezvous secret", f)
	}
	require.Contains(t, logs, "launch_container.sh", "the launch scripts were searched too")
	for _, m := range regexp.MustCompile(`(?m)^ENV (TFYARN_\w+)=(.*)$`).FindAllStringSubmatch(logs, -1) {
		// An absolute path (TFYARN_PREEMPTION_FILE) is judged by its parts: a
		// long directory chain is no key, but a key-like file name would be.
		parts := []string{m[2]}
		if filepath.IsAbs(m[2]) {
			parts = strings.Split(m[2], "/")
		}
		for _, part := range parts {
			require.NotRegexp(t, `[A-Za-z0-9+/_-]{40,}`, part, "%s looks like a key", m[1])
		}
	}
	requireNoStaging(t, c, r.AppID)
}

// A chief that fails fails the job at once, and the diagnostics quote its
// stderr.
func testChiefFails(t *testing.T, c *clustertest.Cluster, bin string) {
	program := `if [ "$TFYARN_TASK" = chief:0 ]; then echo preamble >&2; echo boom >&2; exit 1; fi; exec sleep 600`
	start := time.Now()
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--name", "e2e-tf-chief-fails",
		"--chief", "1c,128m", "--worker", "2x1c,128m", "--ps", "1c,128m", "--output", "json", "--", "sh", "-c", program)
	t.Logf("%.1fs\nstdout: %s\nstderr: %s", time.Since(start).Seconds(), stdout, stderr)
	require.Equal(t, exitJobFailed, code)
	r := runJSON(t, stdout)
	require.Equal(t, "FAILED", r.FinalStatus)
	require.Regexp(t, `^chief:0 \(container \S+ on \S+\) failed: exit code 1; last stderr of chief:0: preamble \| boom$`, r.Diagnostics)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Contains(t, lines[len(lines)-1], "tfyarn: "+r.AppID+" ended FAILED: chief:0")

	v := statusJSON(t, c, r.AppID)
	require.Equal(t, "FAILED", v.FinalStatus)
	require.Contains(t, v.Diagnostics, "chief:0")
	require.Contains(t, v.Diagnostics, "boom")
	requireNoStaging(t, c, r.AppID)
}

// tfPython makes sure .venv has the pinned TensorFlow (a no-op once it
// has) and returns its interpreter: the tasks run on this machine.
func tfPython(t *testing.T, c *clustertest.Cluster) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(c.Root, "scripts", "tfenv.sh"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "scripts/tfenv.sh: %s", out)
	return filepath.Join(c.Root, ".venv", "bin", "python")
}

// execTF runs a TensorFlow job: slower than execTfyarn allows.
func execTF(t *testing.T, c *clustertest.Cluster, bin string, args ...string) (client.Result, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	start := time.Now()
	t.Logf("step: tfyarn run --output json %s (at most 6m)", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, bin, append([]string{"run", "--output", "json"}, args...)...)
	cmd.Env = c.Env()
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	_ = cmd.Run()
	t.Logf("%.1fs\nstdout: %s\nstderr: %s", time.Since(start).Seconds(), o.String(), e.String())
	return runJSON(t, o.String()), e.String(), cmd.ProcessState.ExitCode()
}

func testMWMS(t *testing.T, c *clustertest.Cluster, bin, python string) {
	r, _, code := execTF(t, c, bin, "--name", "e2e-tf-mwms", "--chief", "1c,1g", "--worker", "2x1c,1g",
		"--python", python, filepath.Join(c.Root, "examples", "mwms_keras.py"), "--", "--epochs", "1", "--steps-per-epoch", "5")
	require.Equal(t, exitOK, code, r.Diagnostics)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	require.True(t, strings.HasPrefix(r.Diagnostics, "chief:0 succeeded"), r.Diagnostics)
	logs := appLogs(t, c, r.AppID, 4)
	for _, task := range []string{`"chief","index":0`, `"worker","index":0`, `"worker","index":1`} {
		require.Regexp(t, `(?m)^TF_CONFIG=\{"cluster":\{"chief":\["[^"]+"\],"worker":\["[^"]+","[^"]+"\]\},"task":\{"type":`+regexp.QuoteMeta(task)+`\}\}$`, logs)
	}
}

// ParameterServerStrategy, in the queue whose nodes carry the gpu label
// (the other NodeManager: room for five TensorFlow tasks beside the other
// tests). The chief's end stops the ps, the workers and the evaluator.
func testPSS(t *testing.T, c *clustertest.Cluster, bin, python string) {
	r, _, code := execTF(t, c, bin, "--name", "e2e-tf-pss", "--queue", "ml-gpu",
		"--chief", "1c,1g", "--worker", "2x1c,1g", "--ps", "1c,1g", "--evaluator", "1c,1g",
		"--python", python, filepath.Join(c.Root, "examples", "ps_strategy.py"), "--",
		"--model-dir", clustertest.ContainerDir(t), "--epochs", "1", "--steps-per-epoch", "5")
	require.Equal(t, exitOK, code, r.Diagnostics)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	require.Contains(t, r.Diagnostics, "chief:0 succeeded; stopped ")
	var chiefEnd int
	for _, task := range r.Tasks {
		if task.Task == "chief:0" {
			require.Equal(t, "succeeded", task.State)
			chiefEnd++
		} else if task.Type == "ps" || task.Type == "evaluator" {
			require.Equal(t, "stopped", task.State, task.Task)
		}
	}
	require.Equal(t, 1, chiefEnd)
	v := statusJSON(t, c, r.AppID)
	logs := appLogs(t, c, r.AppID, 6)
	done := regexp.MustCompile(`(?m)^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) tfyarn am: chief:0 succeeded in `).FindStringSubmatch(logs)
	require.NotNil(t, done, "the AM logged the chief's end")
	at, err := time.ParseInLocation("2006-01-02 15:04:05.000", done[1], time.Local)
	require.NoError(t, err)
	took := time.UnixMilli(v.FinishTimeMS).Sub(at)
	t.Logf("the application finished %s after the chief's exit", took)
	require.Less(t, took, 30*time.Second)
}

// A script that raises fails the job with the traceback's last line in
// the diagnostics that `tfyarn status` shows.
func testScriptRaises(t *testing.T, c *clustertest.Cluster, bin, python string) {
	script := filepath.Join(t.TempDir(), "raises.py")
	require.NoError(t, os.WriteFile(script, []byte("import tensorflow as tf\n\n\ndef main():\n    raise ValueError('tfyarn-e2e: bad input ' + tf.__version__)\n\n\nmain()\n"), 0o644))
	r, stderr, code := execTF(t, c, bin, "--name", "e2e-tf-raises", "--worker", "1c,1g", "--python", python, script)
	require.Equal(t, exitJobFailed, code)
	require.Equal(t, "FAILED", r.FinalStatus)
	require.Contains(t, stderr, "ended FAILED: worker:0")
	v := statusJSON(t, c, r.AppID)
	require.Regexp(t, `last stderr of worker:0: .*ValueError: tfyarn-e2e: bad input 2\.\d+\.\d+$`, v.Diagnostics)
}

// appLogs reads the application's aggregated logs with Hadoop's own CLI,
// waiting until the logs of the given number of containers are in.
func appLogs(t *testing.T, c *clustertest.Cluster, appID string, containers int) string {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		// `yarn logs` fails until the first NodeManager has uploaded its part.
		out, stderr, err := c.TryHadoop("yarn", "logs", "-applicationId", appID)
		if err != nil && !strings.Contains(stderr, "Can not find") {
			t.Fatalf("yarn logs -applicationId %s: %v\n%s", appID, err, stderr)
		}
		seen := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^Container: (container_\S+) on `).FindAllStringSubmatch(out, -1) {
			seen[m[1]] = true
		}
		if len(seen) >= containers && strings.Contains(out, "LogType:stderr") {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the logs of %d containers of %s were not aggregated within 90s; got %d:\n%s", containers, appID, len(seen), out)
		}
		time.Sleep(2 * time.Second)
	}
}

// appLogsWithAMLog is appLogs, waiting up to a minute more until the AM's
// container's section holds the AM's log (am.stderr): once, in a CI-shaped
// run, every container's section was there but the AM's log was not, its
// NodeManager's upload coming after the others'.
func appLogsWithAMLog(t *testing.T, c *clustertest.Cluster, appID string, containers int) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		out := appLogs(t, c, appID, containers)
		if strings.Contains(amLogOf(out), "LogType:am.stderr") || time.Now().After(deadline) {
			return out
		}
		time.Sleep(2 * time.Second)
	}
}
