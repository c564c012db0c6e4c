package clustertest

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestUser is the user the tests act as on a cluster whose containers run as their users (and
// the README's commands, after `source .testcluster/env.sh`): LinuxContainerExecutor refuses root.
const TestUser = "alice"

// RootLockDir holds the locks root takes for every test cluster on this machine (testcluster/cluster.sh
// makes it too): root's alone, not world-writable /tmp.
const RootLockDir = "/run/tfyarn-testcluster"

// RunsAsUsers reports whether the cluster's NodeManagers run every container as the Unix user who
// submitted it (LinuxContainerExecutor with the test cluster's helper, TC_EXECUTOR=linux).
func (c *Cluster) RunsAsUsers() bool { return c.Facts["executor"] == "linux" }

// User returns name, a user who may submit to the cluster: when its containers run as their users,
// a Unix user of that name then exists (made here with useradd, uid >= 2000, no home directory,
// login shell /bin/sh; it stays, like alice and bob, so that no later user inherits its uid and
// files). The tests' fresh users (HADOOP_USER_NAME=tfyarn-e2e-<random>) come from here.
func (c *Cluster) User(t testing.TB, name string) string {
	t.Helper()
	if !c.RunsAsUsers() {
		return name
	}
	if _, err := user.Lookup(name); err == nil {
		return name
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// useradd locks /etc/passwd and fails at once when another holds it: one at a time (the lock in
	// root's own directory, not world-writable /tmp, where another user could hold it).
	if err := os.MkdirAll(RootLockDir, 0o700); err != nil {
		t.Fatalf("clustertest: making %s (root only): %v", RootLockDir, err)
	}
	cmd := exec.CommandContext(ctx, "flock", "-w", "50", filepath.Join(RootLockDir, "users.lock"),
		"useradd", "--no-create-home", "--shell", "/bin/sh", "--key", "UID_MIN=2000", name)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, lookErr := user.Lookup(name); lookErr == nil {
			return name // another test binary made it first
		}
		t.Fatalf("clustertest: the cluster in %s runs containers as their users, and Unix user %q could not be made (useradd needs root): %v\n%s", c.Dir, name, err, out)
	}
	return name
}

// Superuser is the HDFS superuser and YARN administrator of the cluster: the OS user who started
// it (and runs the tests). Hadoop runs Hadoop's CLIs as this user.
func (c *Cluster) Superuser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

// actAsTestUser makes this test process act as TestUser when the cluster runs containers as their
// users and nothing chose a user yet (`make test` sources .testcluster/env.sh, which does the same):
// every submission of a test that names no user of its own is then alice's, never root's.
func actAsTestUser(c *Cluster) {
	if c.RunsAsUsers() && strings.TrimSpace(os.Getenv("HADOOP_USER_NAME")) == "" && c.Kerberos == nil {
		_ = os.Setenv("HADOOP_USER_NAME", TestUser)
	}
}

// NodeManagers is how many NodeManagers the cluster runs (its ready file's nodemanagers=).
func (c *Cluster) NodeManagers(t testing.TB) int {
	t.Helper()
	n, err := strconv.Atoi(c.Facts["nodemanagers"])
	if err != nil || n < 1 {
		t.Fatalf("clustertest: the cluster in %s has no NodeManager count in its facts (nodemanagers=%q)", c.Dir, c.Facts["nodemanagers"])
	}
	return n
}

// ContainerDir is a temporary directory (removed when the test ends) that every container on this
// machine may write, whichever user it runs as: t.TempDir() is its test process's alone (0700),
// so under LinuxContainerExecutor a task could neither create a marker file there nor, when an
// attack test checks that an injected command never ran, prove anything by its absence.
func ContainerDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	// t.TempDir() is <per-test directory>/<NNN>; both are 0700.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatalf("clustertest: opening %s to the containers' users: %v", d, err)
		}
	}
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatalf("clustertest: opening %s to the containers' users: %v", dir, err)
	}
	return dir
}

// NodeManagerLogs is what the cluster's NodeManagers logged so far: each NodeManager process's
// logs/nm-I.log, after logs/cluster.log (where MiniYARNCluster's NodeManagers, TC_NM_HOSTS=0, log).
func (c *Cluster) NodeManagerLogs(t testing.TB) []byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(c.Dir, "logs", "nm-*.log"))
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	var all []byte
	for _, f := range append([]string{filepath.Join(c.Dir, "logs", "cluster.log")}, files...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("clustertest: reading the NodeManagers' logs: %v", err)
		}
		all = append(append(all, b...), '\n')
	}
	return all
}
