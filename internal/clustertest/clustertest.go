// Package clustertest gives end-to-end tests the real single-machine Hadoop cluster of
// testcluster/: it starts the cluster when it is not up (one start shared by every test binary,
// serialised with a lock file) and fails the test loudly when it cannot, never skipping.
package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Cluster describes a running test cluster.
type Cluster struct {
	Root    string // the repository root
	ConfDir string // the client configuration (HADOOP_CONF_DIR)
	Profile string // plain or privacy
	Facts   map[string]string
}

var (
	once    sync.Once
	shared  *Cluster
	failure error
)

// Require returns the running cluster, starting it first if needed. The profile is the one
// already running, or TFYARN_TESTCLUSTER_PROFILE (default plain) for a fresh start.
func Require(t testing.TB) *Cluster {
	t.Helper()
	once.Do(func() { shared, failure = ensureUp() })
	if failure != nil {
		t.Fatalf("clustertest: the test cluster is needed and could not be started: %v", failure)
	}
	return shared
}

// RepoRoot finds the repository root from this source file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func ensureUp() (*Cluster, error) {
	root := RepoRoot()
	script := filepath.Join(root, "testcluster", "cluster.sh")
	if err := run(root, 5*time.Second, script, "status"); err != nil {
		profile := os.Getenv("TFYARN_TESTCLUSTER_PROFILE")
		if profile == "" {
			profile = "plain"
		}
		// flock serialises concurrent test binaries; the second one finds the cluster healthy.
		if err := run(root, 6*time.Minute, "flock", filepath.Join(root, ".testcluster.lock"), script, "up", profile); err != nil {
			return nil, err
		}
	}
	facts, err := readFacts(filepath.Join(root, ".testcluster", "ready"))
	if err != nil {
		return nil, err
	}
	return &Cluster{
		Root:    root,
		ConfDir: filepath.Join(root, ".testcluster", "conf"),
		Profile: facts["profile"],
		Facts:   facts,
	}, nil
}

func readFacts(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading cluster facts: %w", err)
	}
	facts := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			facts[k] = v
		}
	}
	return facts, nil
}

func run(dir string, timeout time.Duration, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String())
	}
	return nil
}

// Env returns os.Environ with HADOOP_CONF_DIR pointing at the cluster, for child processes.
func (c *Cluster) Env(extra ...string) []string {
	env := append(os.Environ(), "HADOOP_CONF_DIR="+c.ConfDir)
	return append(env, extra...)
}

// Hadoop runs one of Hadoop's own Java CLIs against the cluster (see testcluster/hadoop.sh),
// e.g. c.Hadoop(t, "yarn", "node", "-list"), and returns its standard output.
func (c *Cluster) Hadoop(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.Root, "testcluster", "hadoop.sh"), args...)
	cmd.Env = c.Env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hadoop.sh %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}
