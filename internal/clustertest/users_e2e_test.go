//go:build e2e

package clustertest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRemoveTestUserLeavesNothingOfTheirs: README "make test removes the Unix users its tests
// made": testcluster/users.sh's remove_test_user, which scripts/test.sh calls for every
// tfyarn-* user that appeared during the run, ends the user's processes, removes their files in
// /tmp and in the cluster directories, then the user. Root only, like the clusters that make them.
func TestRemoveTestUserLeavesNothingOfTheirs(t *testing.T) {
	require.Equal(t, 0, os.Getuid(), "the test clusters make their users as root; run the end-to-end tests as root (make test)")
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "tfyarn-e2e-rm" + hex.EncodeToString(b)
	out, err := exec.Command("useradd", "--no-create-home", "--shell", "/bin/sh", "--key", "UID_MIN=2000", name).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
	u, err := user.Lookup(name)
	require.NoError(t, err)
	uid, _ := strconv.Atoi(u.Uid)

	// Their files: a directory in /tmp, a file in a cluster directory of this checkout.
	tmpDir, err := os.MkdirTemp("/tmp", "tfyarn-rmuser-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(tmpDir) })
	require.NoError(t, os.WriteFile(filepath.Join(tmpDir, "theirs"), []byte("x"), 0o600))
	clusterDir := filepath.Join(RepoRoot(), ".testcluster-rmuser-"+hex.EncodeToString(b))
	require.NoError(t, os.MkdirAll(clusterDir, 0o755))
	t.Cleanup(func() { os.RemoveAll(clusterDir) })
	inCluster := filepath.Join(clusterDir, "container-file")
	require.NoError(t, os.WriteFile(inCluster, []byte("x"), 0o600))
	for _, p := range []string{tmpDir, filepath.Join(tmpDir, "theirs"), inCluster} {
		require.NoError(t, os.Chown(p, uid, uid))
	}
	// A process of theirs.
	sleeper := exec.Command("sleep", "300")
	sleeper.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	require.NoError(t, sleeper.Start())
	ended := make(chan error, 1)
	go func() { ended <- sleeper.Wait() }()

	cmd := exec.Command("bash", "-c", `source testcluster/users.sh && remove_test_user "$1"`, "bash", name)
	cmd.Dir = RepoRoot()
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "testcluster: removed user "+name+" (uid "+u.Uid+") and 3 file(s) of theirs\n", string(out))

	_, err = user.Lookup(name)
	require.Error(t, err, "the user is still there")
	for _, p := range []string{tmpDir, inCluster} {
		_, err := os.Lstat(p)
		require.True(t, os.IsNotExist(err), "%s of the removed user is still there (%v)", p, err)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		_ = sleeper.Process.Kill()
		t.Fatal("the removed user's process still runs 10 s later")
	}

	// A user the clusters did not make (uid below 2000) is refused.
	cmd = exec.Command("bash", "-c", `source testcluster/users.sh && remove_test_user root`)
	cmd.Dir = RepoRoot()
	out, err = cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "not removing user root: uid 0 is below 2000")
}

// TestCleanMachineRemovesWhatTheClustersInstalled: README "`make clean-machine` (root) removes
// everything the test clusters put on the machine ..., saying what it removed", on a sandbox
// (a checkout with a cluster directory and a venv link, a hosts file, a cache, a user and a group
// of its own) so that the machine's real clusters and users stay.
func TestCleanMachineRemovesWhatTheClustersInstalled(t *testing.T) {
	require.Equal(t, 0, os.Getuid(), "make clean-machine is root's; run the end-to-end tests as root (make test)")
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	tag := hex.EncodeToString(b)
	sandbox := t.TempDir()
	checkout := filepath.Join(sandbox, "checkout")
	helper := filepath.Join(checkout, ".testcluster-x", "bin", "container-executor")
	require.NoError(t, os.MkdirAll(filepath.Dir(helper), 0o755))
	require.NoError(t, os.WriteFile(helper, []byte("#!/bin/sh\n"), 0o6755))
	cache := filepath.Join(sandbox, "cache")
	require.NoError(t, os.MkdirAll(filepath.Join(cache, "venvs", "k"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(cache, "venvs", "k"), filepath.Join(checkout, ".venv")))
	hosts := filepath.Join(sandbox, "hosts")
	require.NoError(t, os.WriteFile(hosts, []byte("127.0.0.1 localhost\n127.0.1.10 nm0.tfyarn.test\n127.0.1.11 nm1.tfyarn.test\n10.0.0.1 other.example\n"), 0o644))
	name, group := "tfyarn-e2e-cm"+tag, "tfyarn-cm"+tag
	out, err := exec.Command("useradd", "--no-create-home", "--shell", "/bin/sh", "--key", "UID_MIN=2000", name).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
	out, err = exec.Command("groupadd", group).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { _ = exec.Command("groupdel", group).Run() })

	cmd := exec.Command("bash", "scripts/clean-machine.sh")
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "CLEAN_ROOT="+checkout, "CLEAN_HOSTS="+hosts, "CLEAN_CACHES="+cache,
		"CLEAN_USERS=^"+name+"$", "CLEAN_GROUP="+group)
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, said := range []string{
		"clean-machine: removed the test cluster " + filepath.Join(checkout, ".testcluster-x"),
		"clean-machine: removed user " + name,
		"clean-machine: removed the group " + group,
		"clean-machine: removed 2 line(s) mapping nmI.tfyarn.test from " + hosts,
		"clean-machine: removed the cache " + cache,
		"clean-machine: removed " + filepath.Join(checkout, ".venv"),
	} {
		require.Contains(t, string(out), said)
	}
	for _, gone := range []string{helper, filepath.Join(checkout, ".testcluster-x"), cache, filepath.Join(checkout, ".venv")} {
		_, err := os.Lstat(gone)
		require.True(t, os.IsNotExist(err), "%s is still there", gone)
	}
	_, err = user.Lookup(name)
	require.Error(t, err, "the user is still there")
	_, err = user.LookupGroup(group)
	require.Error(t, err, "the group is still there")
	left, err := os.ReadFile(hosts)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1 localhost\n10.0.0.1 other.example\n", string(left))

	// A second run finds nothing and says so.
	cmd = exec.Command("bash", "scripts/clean-machine.sh")
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "CLEAN_ROOT="+checkout, "CLEAN_HOSTS="+hosts, "CLEAN_CACHES="+cache,
		"CLEAN_USERS=^"+name+"$", "CLEAN_GROUP="+group)
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "clean-machine: nothing of the test clusters was on this machine\n", string(out))
}
