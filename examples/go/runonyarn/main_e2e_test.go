//go:build e2e

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// The Go example, called in process, runs the MWMS example (chief + 2
// workers) on the test cluster with the repository's TensorFlow venv to
// SUCCEEDED.
//
//	go test -tags e2e -run E2ERunOnYarnExample ./examples/go/runonyarn/
func TestE2ERunOnYarnExample(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	python := venvPython(t, c)
	t.Setenv("HADOOP_CONF_DIR", c.ConfDir)

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(ctx, []string{
		"-python", python,
		"-script", filepath.Join(c.Root, "examples", "mwms_keras.py"),
		"-tfyarn", bin,
		"-name", "e2e-go-runonyarn",
		"--", "--epochs", "1", "--steps-per-epoch", "5",
	}, &stdout, &stderr)
	t.Logf("%.1fs\nstdout:\n%s\nstderr:\n%s", time.Since(start).Seconds(), stdout.String(), stderr.String())
	require.Equal(t, 0, code)
	out := stdout.String()
	require.Regexp(t, `(?m)^application: application_\d+_\d+$`, out)
	require.Regexp(t, `(?m)^final status: SUCCEEDED \(FINISHED\)$`, out)
	require.Regexp(t, `(?m)^diagnostics: chief:0 succeeded`, out)
	for _, task := range []string{"chief:0", "worker:0", "worker:1"} {
		require.Regexp(t, `(?m)^task `+regexp.QuoteMeta(task)+`\s+\S+\s+\S+:\d+ exit \S+$`, out)
	}
	require.Regexp(t, `(?m)^task chief:0\s+succeeded\s+\S+:\d+ exit 0$`, out)
}

// Cancelling the context (what Ctrl-C does in main) kills the application:
// exit 1, final status KILLED.
func TestE2ERunOnYarnExampleInterrupted(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	t.Setenv("HADOOP_CONF_DIR", c.ConfDir)
	script := filepath.Join(t.TempDir(), "sleeps.py")
	require.NoError(t, os.WriteFile(script, []byte("import time\n\ntime.sleep(600)\n"), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	interrupted, interrupt := context.WithCancel(ctx)
	timer := time.AfterFunc(10*time.Second, interrupt) // well after the submission
	defer timer.Stop()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	code := run(interrupted, []string{"-python", "python3", "-script", script, "-tfyarn", bin, "-name", "e2e-go-runonyarn-interrupted"}, &stdout, &stderr)
	t.Logf("%.1fs\nstdout:\n%s\nstderr:\n%s", time.Since(start).Seconds(), stdout.String(), stderr.String())
	require.Equal(t, 1, code)
	require.Regexp(t, `(?m)^application: application_\d+_\d+$`, stdout.String())
	require.Regexp(t, `(?m)^final status: KILLED \(KILLED\)$`, stdout.String())
	require.Contains(t, stderr.String(), "context canceled")
}

// A bad flag is a usage error, before anything touches the cluster.
func TestRunBadFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 2, run(context.Background(), []string{"-no-such-flag"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "no-such-flag")
	require.Empty(t, stdout.String())
}

// venvPython makes sure .venv has the pinned TensorFlow (a no-op once it
// has) and returns its interpreter: the test cluster's tasks run on this
// machine.
func venvPython(t *testing.T, c *clustertest.Cluster) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", filepath.Join(c.Root, "scripts", "tfenv.sh")).CombinedOutput()
	require.NoError(t, err, "scripts/tfenv.sh: %s", out)
	return filepath.Join(c.Root, ".venv", "bin", "python")
}
