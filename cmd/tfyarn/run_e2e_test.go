//go:build e2e

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// `tfyarn run` end to end, as a user runs it: the static binary built here,
// against both clusters (plain and hadoop.rpc.protection=privacy).
//
//	go test -tags e2e -run E2ERun ./cmd/tfyarn/
func TestE2ERun(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	clustertest.EachCluster(t, func(t *testing.T, c *clustertest.Cluster) {
		t.Run("succeeds", func(t *testing.T) { testRunSucceeds(t, c, bin) })
		t.Run("fails", func(t *testing.T) { testRunFails(t, c, bin) })
		t.Run("rejects", func(t *testing.T) { testRunRejects(t, c, bin) })
	})
}

// execTfyarn runs the binary as a separate process, the way users do.
func execTfyarn(t *testing.T, c *clustertest.Cluster, bin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return execTfyarnFor(t, c, bin, 2*time.Minute, env, args...)
}

// execTfyarnFor is execTfyarn for commands that may take up to limit.
func execTfyarnFor(t *testing.T, c *clustertest.Cluster, bin string, limit time.Duration, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	t.Logf("step: tfyarn %s (at most %s)", strings.Join(args, " "), limit)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = c.Env(env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("tfyarn %s: %v", strings.Join(args, " "), err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

func runJSON(t *testing.T, stdout string) client.Result {
	t.Helper()
	var r client.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &r), "stdout: %q", stdout)
	require.Regexp(t, `^application_\d+_\d+$`, r.AppID)
	return r
}

// statusJSON is `tfyarn status APP_ID --output json`, which must succeed.
func statusJSON(t *testing.T, c *clustertest.Cluster, appID string) appView {
	t.Helper()
	out, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", appID, "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var v appView
	require.NoError(t, json.Unmarshal([]byte(out), &v), "stdout: %q", out)
	return v
}

func testRunSucceeds(t *testing.T, c *clustertest.Cluster, bin string) {
	start := time.Now()
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--worker", "3x1c,256m", "--name", "e2e-run-ok", "--output", "json", "--", "sh", "-c", "exit 0")
	t.Logf("%.1fs\nstdout: %s\nstderr: %s", time.Since(start).Seconds(), stdout, stderr)
	require.Equal(t, exitOK, code)
	r := runJSON(t, stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	require.Equal(t, "FINISHED", r.State)
	require.Equal(t, "all 3 tasks succeeded", r.Diagnostics)
	require.Contains(t, stderr, r.AppID+" RUNNING")

	// Exactly 3 task containers: the RM's audit log records every container
	// its scheduler hands an application ("AM Allocated Container"),
	// surplus ones included, and it has the AM's plus three.
	require.Equal(t, 4, allocatedContainers(t, c, r.AppID), "containers the RM allocated to %s (AM + 3 tasks)", r.AppID)
	requireNoStaging(t, c, r.AppID)
}

func testRunFails(t *testing.T, c *clustertest.Cluster, bin string) {
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--worker", "3x1c,256m", "--name", "e2e-run-fail", "--output", "json", "--", "sh", "-c", "exit 3")
	t.Logf("stdout: %s\nstderr: %s", stdout, stderr)
	require.Equal(t, exitJobFailed, code)
	r := runJSON(t, stdout)
	require.Equal(t, "FAILED", r.FinalStatus)
	require.Zero(t, r.UploadedBytes, "the binary is in the cache since the previous run")
	require.Regexp(t, `^worker:\d \(container container_\S+ on \S+\) failed: exit code 3`, r.Diagnostics)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Contains(t, lines[len(lines)-1], "tfyarn: "+r.AppID+" ended FAILED: worker:")

	// What the AM told the RM is what status shows afterwards.
	v := statusJSON(t, c, r.AppID)
	require.Equal(t, "FAILED", v.FinalStatus)
	require.Equal(t, r.Diagnostics, v.Diagnostics)
	require.Contains(t, v.Diagnostics, "exit code 3")
	require.Regexp(t, `worker:\d`, v.Diagnostics)
	requireNoStaging(t, c, r.AppID)
}

// testRunRejects checks that jobs that cannot run fail before anything is
// created. A user of its own makes "nothing created" checkable while other
// tests submit applications.
func testRunRejects(t *testing.T, c *clustertest.Cluster, bin string) {
	user := c.User(t, "tfyarn-e2e-"+randomHex(t))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--worker", "3x1q"}, `tfyarn: worker spec "3x1q": bad vcores "1q"`},
		{[]string{"--worker", "1c,256m", "--queue", "no-such-queue"}, `tfyarn: queue "no-such-queue" does not exist; known queues: default, ml-gpu`},
		{[]string{"--worker", "1x64c"}, "tfyarn: worker asks 64 vcores per task but the cluster's maximum allocation is 8 vcores"},
		{[]string{"--worker", "1c,64g"}, "tfyarn: worker asks 64 GiB per task but the cluster's maximum allocation is 8 GiB"},
	} {
		args := append(append([]string{"run"}, tc.args...), "--", "true")
		stdout, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + user}, args...)
		require.Equal(t, exitUsage, code, "%v: %s", tc.args, stderr)
		require.Empty(t, stdout)
		require.True(t, strings.HasPrefix(stderr, tc.want), "%v: %q", tc.args, stderr)
		require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	}
	requireNothingCreatedFor(t, c, user)
}

// requireNothingCreatedFor: user (a fresh HADOOP_USER_NAME of one test) has
// no application on the cluster and no .tfyarn directory (staging or cache).
func requireNothingCreatedFor(t *testing.T, c *clustertest.Cluster, user string) {
	t.Helper()
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	rm, err := yarn.NewApplicationClient(conf, yarn.ClientOptions{User: user})
	require.NoError(t, err)
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	apps, err := rm.GetApplications(ctx, yarn.ApplicationFilter{Users: []string{user}})
	require.NoError(t, err)
	require.Empty(t, apps, "applications of %s", user)
	fs, err := hdfs.Connect(ctx, conf, user)
	require.NoError(t, err)
	defer fs.Close()
	exists, err := fs.Exists(ctx, hdfs.BaseDir(user))
	require.NoError(t, err)
	require.False(t, exists, "%s was created (staging or cache)", hdfs.BaseDir(user))
}

var auditAllocated = regexp.MustCompile(`OPERATION=AM Allocated Container\tTARGET=SchedulerApp\tRESULT=SUCCESS\tAPPID=(\S+)\tCONTAINERID=`)

// allocatedContainers counts the RM audit log's allocations for appID.
func allocatedContainers(t *testing.T, c *clustertest.Cluster, appID string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(c.Dir, "logs", "cluster.log"))
	require.NoError(t, err)
	n := 0
	for _, m := range auditAllocated.FindAllStringSubmatch(string(data), -1) {
		if m[1] == appID {
			n++
		}
	}
	return n
}

// requireNoStaging checks, with Hadoop's own CLI, that the application's
// staging directory is gone.
func requireNoStaging(t *testing.T, c *clustertest.Cluster, appID string) {
	t.Helper()
	base := hdfs.BaseDir(ipc.DefaultUser())
	out := c.Hadoop(t, "hdfs", "dfs", "-ls", base)
	require.Contains(t, out, base+"/cache")
	require.NotContains(t, out, appID)
}

// requireNoContainerProcess: no process of appID's containers is left on
// this machine (every NodeManager of the test cluster runs here). A
// container's processes run in its working directory, which names the
// application; the launch shell names it in its command line.
func requireNoContainerProcess(t *testing.T, appID string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		left := containerProcesses(appID)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of %s still running 20s after it ended: %v", appID, left)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func containerProcesses(appID string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join("/proc", pid, "cwd"))
		cmdline, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		// YARN's ContainerLocalizer (a JVM the NodeManager starts as the user, the application in
		// its arguments) is the NodeManager's helper, not the job's: on a frozen NodeManager it
		// waits for its NodeManager, which ends it.
		if bytes.Contains(cmdline, []byte("localizer.ContainerLocalizer")) {
			continue
		}
		if strings.Contains(cwd, appID) || strings.Contains(string(cmdline), appID+"/") {
			out = append(out, pid+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}

func randomHex(t *testing.T) string {
	b := make([]byte, 4)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}
