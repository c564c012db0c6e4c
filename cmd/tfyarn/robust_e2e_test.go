//go:build e2e

package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// Issue 10: never hang, never hide the reason (the client's side).
//
//	go test -tags e2e -run E2ERobust ./cmd/tfyarn/
func TestE2ERobust(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	t.Run("refused", func(t *testing.T) { testRobustRefused(t, c, bin) })
	t.Run("kill-ended", func(t *testing.T) { testRobustKillEnded(t, c, bin) })
	t.Run("orphaned-staging", func(t *testing.T) { testRobustOrphans(t, c, bin) })
	t.Run("rm-silence", func(t *testing.T) { testRobustRMSilence(t, c, bin) })
}

// testRobustRefused: what can never run is refused before anything is
// created (no application, no staging, nothing in the cache), in one line,
// exit 2, within seconds. A user of its own makes "nothing" checkable.
func testRobustRefused(t *testing.T, c *clustertest.Cluster, bin string) {
	user := c.User(t, "tfyarn-e2e-"+randomHex(t))
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.tar.gz")
	require.NoError(t, os.WriteFile(corrupt, []byte("not a gzip file\n"), 0o644))
	noPython := filepath.Join(dir, "data.tar.gz")
	tar := exec.Command("tar", "czf", noPython, "-C", dir, "corrupt.tar.gz")
	require.NoError(t, tar.Run())
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// The cluster's two 8 GiB nodes without a label are full with two 8 GiB workers: no room for the AM.
		{"8g workers beside the AM (issue case 1)", []string{"--worker", "2x1c,8g"},
			"tfyarn: the job can never run: its containers on nodes without a label (worker 2 × 1 vcores, 8 GiB, the ApplicationMaster 1 vcores, 256 MiB) must all run at once and need 16640 MiB of memory, but those nodes have 16 GiB in all (2 nodes, the largest with 8 vcores, 8 GiB, 2 GPUs); ask for fewer or smaller tasks, or run the ApplicationMaster elsewhere (--am-node-label)"},
		{"label without capacity (issue case 2)", []string{"--worker", "1c,256m", "--node-label", "gpu"},
			"tfyarn: queue default has no capacity on nodes labelled gpu, where worker would run; use a queue with capacity there (--queue) or change --node-label"},
		{"AM label without capacity", []string{"--worker", "1c,256m", "--am-node-label", "gpu"},
			"tfyarn: queue default has no capacity on nodes labelled gpu, where the ApplicationMaster would run"},
		{"more GPUs than the label has (issue case 3)", []string{"--queue", "ml-gpu", "--worker", "3x1c,1g,2gpu"},
			"tfyarn: the job can never run: its containers on nodes labelled gpu (worker 3 × 1 vcores, 1 GiB, 2 GPUs, the ApplicationMaster 1 vcores, 256 MiB) must all run at once and need 6 GPUs, but those nodes have 2 in all"},
		{"more memory than the cluster (issue case 3)", []string{"--worker", "20x1c,4g"},
			"tfyarn: the job can never run: its containers on nodes without a label (worker 20 × 1 vcores, 4 GiB"},
		{"no such label per type (issue case 4)", []string{"--worker", "1c,256m", "--node-label", "worker=nosuchlabel"},
			`tfyarn: worker asks node label "nosuchlabel", which the cluster does not have (its labels: gpu); use one of them or change --node-label`},
		{"no such label job-wide (issue case 4)", []string{"--worker", "1c,256m", "--node-label", "nosuchlabel"},
			`tfyarn: worker asks node label "nosuchlabel", which the cluster does not have`},
		{"corrupt env archive (issue case 5)", []string{"--worker", "1c,256m", "--env", corrupt},
			"tfyarn: env " + corrupt + " is not a gzip-compressed tar archive (gzip: not in gzip format); make one with tfyarn pack DIR -o env.tar.gz"},
		{"env archive without Python", []string{"--worker", "1c,256m", "--env", noPython},
			"tfyarn: env " + noPython + " holds no Python environment (no bin/python or bin/python3 at its root)"},
	} {
		start := time.Now()
		args := append(append([]string{"run"}, tc.args...), "--", "true")
		stdout, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + user}, args...)
		took := time.Since(start)
		t.Logf("%s: %.1fs: %s", tc.name, took.Seconds(), stderr)
		require.Equal(t, exitUsage, code, "%s: %s", tc.name, stderr)
		require.Empty(t, stdout, tc.name)
		require.True(t, strings.HasPrefix(stderr, tc.want), "%s:\n got %q\nwant %q", tc.name, stderr, tc.want)
		require.Equal(t, 1, strings.Count(stderr, "\n"), "%s: one line: %q", tc.name, stderr)
		require.Less(t, took, 30*time.Second, tc.name)
	}
	requireNothingCreatedFor(t, c, user)
}

// testRobustKillEnded: killing an application that has ended says so,
// exit 0.
func testRobustKillEnded(t *testing.T, c *clustertest.Cluster, bin string) {
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--worker", "1c,256m", "--name", "e2e-kill-ended", "--output", "json", "--", "true")
	require.Equal(t, exitOK, code, stderr)
	r := runJSON(t, stdout)
	start := time.Now()
	stdout, stderr, code = execTfyarn(t, c, bin, nil, "kill", r.AppID)
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, r.AppID+" already ended FINISHED/SUCCEEDED; nothing to kill\n", stdout)
	require.Empty(t, stderr)
	require.Less(t, time.Since(start), 10*time.Second)
	requireNoStaging(t, c, r.AppID)
	requireNoContainerProcess(t, r.AppID)
}

// testRobustOrphans: a submission removes the staging directories of ended
// applications (here one of an earlier ResourceManager), `cache clean`
// those of applications the RM reports ended; neither touches the one of a
// running application.
func testRobustOrphans(t *testing.T, c *clustertest.Cluster, bin string) {
	// A user of its own: every submission sweeps its user's ended staging directories, so a
	// parallel test's run as the shared test user once removed the one cache clean was to find.
	owner := freshUser(t, c, "tfyarn-e2e-orphans-")
	user := owner.Name
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	fs, err := hdfs.Connect(ctx, conf, user)
	require.NoError(t, err)
	defer fs.Close()
	rm, err := yarn.NewApplicationClient(conf, yarn.ClientOptions{User: user})
	require.NoError(t, err)
	defer rm.Close()
	orphan := func(appID string) string {
		dir, err := fs.CreateStaging(ctx, appID)
		require.NoError(t, err)
		_, err = fs.UploadBytes(ctx, []byte(`{"setenv":"secret"}`), path.Join(dir, "job.json"))
		require.NoError(t, err)
		return dir
	}
	exists := func(p string) bool {
		ok, err := fs.Exists(ctx, p)
		require.NoError(t, err)
		return ok
	}

	// A running application: its staging directory must survive both.
	long := exec.Command(bin, "run", "--worker", "1c,256m", "--name", "e2e-orphans-running", "--", "sleep", "120")
	long.Env = c.Env(owner.Env...)
	var longOut bytes.Buffer
	long.Stdout, long.Stderr = &longOut, &longOut
	require.NoError(t, long.Start())
	defer func() {
		if long.ProcessState == nil {
			_ = long.Process.Kill()
			_ = long.Wait()
		}
	}()
	var running string
	require.Eventually(t, func() bool {
		apps, err := rm.GetApplications(ctx, yarn.ApplicationFilter{Users: []string{user}})
		require.NoError(t, err)
		for _, a := range apps {
			if a.GetName() == "e2e-orphans-running" && a.GetYarnApplicationState().String() == "RUNNING" {
				running = yarn.FormatApplicationID(a.GetApplicationId())
				return true
			}
		}
		return false
	}, 90*time.Second, time.Second, "the long job runs: %s", &longOut)
	runningDir := hdfs.StagingDir(user, running)
	require.True(t, exists(runningDir))

	// An application of an earlier RM incarnation: removed by the next run.
	old := orphan("application_1000000000000_0001")
	start := time.Now()
	stdout, stderr, code := execTfyarn(t, c, bin, owner.Env, "run", "--worker", "1c,256m", "--name", "e2e-orphans", "--output", "json", "--", "true")
	t.Logf("%.1fs\nstdout: %s\nstderr: %s", time.Since(start).Seconds(), stdout, stderr)
	require.Equal(t, exitOK, code, stderr)
	r := runJSON(t, stdout)
	require.Contains(t, stderr, "removed the staging directory "+old+" of application_1000000000000_0001 (unknown)\n")
	require.NotContains(t, stderr, running)
	require.False(t, exists(old))
	require.True(t, exists(runningDir))

	// An application the RM reports FINISHED, whose staging came back
	// (client and AM died): cache clean removes and reports it.
	ended := orphan(r.AppID)
	stdout, stderr, code = execTfyarn(t, c, bin, owner.Env, "cache", "clean", "--older-than", "36500d", "--dry-run")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "would remove staging "+ended+" of "+r.AppID+" (FINISHED)\n")
	require.True(t, exists(ended))
	stdout, stderr, code = execTfyarn(t, c, bin, owner.Env, "cache", "clean", "--older-than", "36500d")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "removed staging "+ended+" of "+r.AppID+" (FINISHED)\n")
	require.NotContains(t, stdout, running)
	require.False(t, exists(ended))
	require.True(t, exists(runningDir))

	// Nothing left behind: the long job killed, its staging gone.
	_, stderr, code = execTfyarn(t, c, bin, owner.Env, "kill", running)
	require.Equal(t, exitOK, code, stderr)
	_ = long.Wait()
	require.Eventually(t, func() bool { return !exists(runningDir) }, 30*time.Second, 500*time.Millisecond)
	stdout, _, code = execTfyarn(t, c, bin, owner.Env, "list")
	require.Equal(t, exitOK, code)
	require.NotContains(t, stdout, running)
}

// testRobustRMSilence: the client reaches the RM through a proxy that goes
// away for a while: run says so on stderr, says when it answers again and
// follows the job to its end.
func testRobustRMSilence(t *testing.T, c *clustertest.Cluster, bin string) {
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	target, _ := conf.Get("yarn.resourcemanager.address")
	require.NotEmpty(t, target)
	p := startProxy(t, target)
	confDir := copyConfDir(t, c.ConfDir, func(data []byte) []byte {
		data = bytes.ReplaceAll(data, []byte("<name>yarn.resourcemanager.address</name><value>"+target+"</value>"),
			[]byte("<name>yarn.resourcemanager.address</name><value>"+p.addr+"</value>"))
		require.Contains(t, string(data), p.addr)
		return data
	})
	cmd := exec.Command(bin, "--conf-dir", confDir, "--timeout", "5s", "run", "--worker", "1c,256m", "--name", "e2e-rm-silence", "--", "sleep", "25")
	cmd.Env = c.Env()
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), " RUNNING\n") }, 90*time.Second, 200*time.Millisecond, "stderr: %s", &stderr)
	p.stop()
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "not answering") }, 60*time.Second, 200*time.Millisecond, "stderr: %s", &stderr)
	time.Sleep(3 * time.Second) // silent for a while
	p.start(t)
	select {
	case err := <-done:
		require.NoError(t, err, "stdout: %s\nstderr: %s", &stdout, &stderr)
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("run did not end\nstdout: %s\nstderr: %s", &stdout, &stderr)
	}
	t.Logf("stdout: %s\nstderr: %s", &stdout, &stderr)
	require.Regexp(t, `ResourceManager at 127\.0\.0\.1:\d+ not answering \(connection refused\); retrying\n`, stderr.String())
	require.Regexp(t, `ResourceManager at 127\.0\.0\.1:\d+ answering again after \d+s\n`, stderr.String())
	require.Equal(t, 1, strings.Count(stderr.String(), "not answering"), "said once: %s", &stderr)
	// Progress and the job's end are status lines: stderr, not stdout.
	require.Contains(t, stderr.String(), "FINISHED SUCCEEDED")
	require.NotContains(t, stdout.String(), "FINISHED")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// tcpProxy forwards a local port to target; stop closes the listener and
// every connection (the port then refuses), start listens again on it.
type tcpProxy struct {
	target, addr string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func startProxy(t *testing.T, target string) *tcpProxy {
	p := &tcpProxy{target: target}
	p.start(t)
	t.Cleanup(p.stop)
	return p
}

func (p *tcpProxy) start(t *testing.T) {
	addr := p.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	require.Eventually(t, func() bool {
		var err error
		ln, err = net.Listen("tcp", addr)
		return err == nil
	}, 10*time.Second, 100*time.Millisecond)
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", p.target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
}

func (p *tcpProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// copyConfDir copies the client configuration in src to a new directory,
// passing yarn-site.xml through editYarnSite: a test's own view of the cluster.
func copyConfDir(t *testing.T, src string, editYarnSite func([]byte) []byte) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		if e.Name() == "yarn-site.xml" {
			data = editYarnSite(data)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644))
	}
	return dst
}
