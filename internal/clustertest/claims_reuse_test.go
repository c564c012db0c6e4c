package clustertest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestClaimsClusterUpReusesAHealthyCluster: README "Running it again reuses
// a healthy cluster" and "at most `CLUSTER_TIMEOUT`=180 s". The state
// directory is made to look like a healthy cluster (a live process of its
// own process group, fresh health report, answering RPC ports), so no
// shared cluster is touched and no JVM starts.
func TestClaimsClusterUpReusesAHealthyCluster(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(RepoRoot(), "testcluster", "cluster.sh"))
	require.NoError(t, err)
	require.Regexp(t, regexp.MustCompile(`(?m)^CLUSTER_TIMEOUT=\$\{CLUSTER_TIMEOUT:-180\}$`), string(script))

	dir := filepath.Join(t.TempDir(), "tc")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	// The stand-in for the cluster's JVM, in a process group of its own:
	// were it judged unhealthy, the script's stop would end only it.
	jvm := exec.Command("sleep", "120")
	jvm.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, jvm.Start())
	defer func() { _ = jvm.Process.Kill(); _ = jvm.Wait() }()
	rm, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer rm.Close()
	nn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer nn.Close()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("cluster.pid", fmt.Sprintf("%d\n", jvm.Process.Pid))
	write("ready", fmt.Sprintf("profile=plain\nnodemanagers=3\nexecutor=linux\nnodemanager-hosts=true\nrm=%s\nfs.defaultFS=hdfs://%s\n", rm.Addr(), nn.Addr()))
	write("health", fmt.Sprintf("ok %d\n", time.Now().Unix()))

	var stdout, stderr bytes.Buffer
	cmd := exec.Command("bash", filepath.Join(RepoRoot(), "testcluster", "cluster.sh"), "up", "plain")
	cmd.Env = append(os.Environ(), "TC_DIR="+dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	require.Less(t, time.Since(start), 10*time.Second)
	require.Equal(t, fmt.Sprintf("testcluster: already up (profile plain, pid %d); reusing it\n", jvm.Process.Pid), stdout.String())
	require.Empty(t, stderr.String())
	require.NoError(t, jvm.Process.Signal(syscall.Signal(0)), "the running cluster was left alone")
	env, err := os.ReadFile(filepath.Join(dir, "env.sh"))
	require.NoError(t, err)
	require.True(t, strings.Contains(string(env), `export HADOOP_CONF_DIR="`+dir+`/conf"`), "env.sh rewritten: %s", env)
}

// TestClaimsDownRemovesTheSetuidHelper: README "the setuid helper lives no longer than its
// cluster": `cluster.sh down` removes the cluster's container-executor (every start builds it anew).
func TestClaimsDownRemovesTheSetuidHelper(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tc")
	helper := filepath.Join(dir, "bin", "container-executor")
	require.NoError(t, os.MkdirAll(filepath.Dir(helper), 0o755))
	require.NoError(t, os.WriteFile(helper, []byte("#!/bin/sh\n"), 0o755))
	cmd := exec.Command("bash", filepath.Join(RepoRoot(), "testcluster", "cluster.sh"), "down")
	cmd.Env = append(os.Environ(), "TC_DIR="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	_, err = os.Stat(helper)
	require.True(t, os.IsNotExist(err), "the helper is still there after down: %v", err)
}
