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
	Dir     string // the cluster's state directory (.testcluster or .testcluster-privacy)
	ConfDir string // the client configuration (HADOOP_CONF_DIR)
	Profile string // plain or privacy
	Facts   map[string]string
}

// A profile names one running cluster: its directory and its ports.
type profile struct {
	name string
	dir  string   // relative to the repository root
	env  []string // port overrides for testcluster/cluster.sh
}

var (
	// The main cluster: whatever `make cluster-up` started (plain unless PROFILE said otherwise).
	mainProfile = profile{dir: ".testcluster"}
	// A second cluster with hadoop.rpc.protection=privacy on ports shifted by 10000, so that the
	// SASL-wrapped paths (auth-conf) are tested in the same run as the plain ones.
	privacyProfile = profile{name: "privacy", dir: ".testcluster-privacy", env: []string{
		"RM_PORT=18032", "SCHEDULER_PORT=18030", "TRACKER_PORT=18031", "ADMIN_PORT=18033",
		"RM_WEB_PORT=18088", "NN_PORT=18020", "NN_HTTP_PORT=19870",
	}}

	mu       sync.Mutex
	started  = map[string]*Cluster{}
	failures = map[string]error{}
)

// Require returns the main test cluster, starting it first if needed. The profile is the one
// already running, or TFYARN_TESTCLUSTER_PROFILE (default plain) for a fresh start.
func Require(t testing.TB) *Cluster {
	t.Helper()
	return requireProfile(t, mainProfile)
}

// RequirePrivacy returns a second cluster whose RPC protection is privacy (SASL auth-conf on
// every token-authenticated connection), starting it if needed. `make test` stops it at the end.
func RequirePrivacy(t testing.TB) *Cluster {
	t.Helper()
	return requireProfile(t, privacyProfile)
}

// EachCluster runs f as parallel subtests "plain" (Require) and "privacy"
// (RequirePrivacy): the same test against both clusters.
func EachCluster(t *testing.T, f func(t *testing.T, c *Cluster)) {
	t.Helper()
	for _, tc := range []struct {
		name    string
		cluster func(testing.TB) *Cluster
	}{
		{"plain", Require},
		{"privacy", RequirePrivacy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f(t, tc.cluster(t))
		})
	}
}

func requireProfile(t testing.TB, p profile) *Cluster {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	c, ok := started[p.dir]
	if !ok && failures[p.dir] == nil {
		c, failures[p.dir] = ensureUp(p)
		started[p.dir] = c
	}
	if err := failures[p.dir]; err != nil {
		t.Fatalf("clustertest: the test cluster (%s) is needed and could not be started: %v", p.dir, err)
	}
	return c
}

// RepoRoot finds the repository root from this source file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

func ensureUp(p profile) (*Cluster, error) {
	root := RepoRoot()
	dir := filepath.Join(root, p.dir)
	env := append([]string{"TC_DIR=" + dir}, p.env...)
	script := filepath.Join(root, "testcluster", "cluster.sh")
	if err := run(root, env, 5*time.Second, script, "status"); err != nil {
		name := p.name
		if name == "" {
			name = os.Getenv("TFYARN_TESTCLUSTER_PROFILE")
		}
		if name == "" {
			name = "plain"
		}
		// flock serialises concurrent test binaries; the second one finds the cluster healthy.
		if err := run(root, env, 6*time.Minute, "flock", "-o", dir+".lock", script, "up", name); err != nil {
			return nil, err
		}
	}
	facts, err := readFacts(filepath.Join(dir, "ready"))
	if err != nil {
		return nil, err
	}
	return &Cluster{
		Root:    root,
		Dir:     dir,
		ConfDir: filepath.Join(dir, "conf"),
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

func run(dir string, env []string, timeout time.Duration, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
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
