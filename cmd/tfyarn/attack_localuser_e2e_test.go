//go:build e2e

package main

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// TestE2EAttackOtherLocalUserRefused: docs/security.md "the test cluster runs containers only as
// its own test users". Another local account of the machine (uid in 1000-1999, a person's, not
// one the cluster made) submits a job under simple authentication: the cluster's helper refuses
// to run its container as that account, so the job fails and nothing of it runs as that user.
func TestE2EAttackOtherLocalUserRefused(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	require.Equal(t, "linux", c.Facts["executor"], "the cluster's NodeManagers use LinuxContainerExecutor")
	name := "mallory" + randomHex(t)[:8]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, os.MkdirAll(clustertest.RootLockDir, 0o700))
	out, err := exec.CommandContext(ctx, "flock", "-w", "50", clustertest.RootLockDir+"/users.lock",
		"useradd", "--no-create-home", "--shell", "/bin/sh", "--key", "UID_MIN=1000", "--key", "UID_MAX=1999", name).CombinedOutput()
	require.NoError(t, err, "making the local account %s: %s", name, out)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = exec.CommandContext(ctx, "pkill", "-KILL", "-u", name).Run()
		if out, err := exec.CommandContext(ctx, "flock", "-w", "50", clustertest.RootLockDir+"/users.lock", "userdel", name).CombinedOutput(); err != nil {
			t.Errorf("removing the local account %s: %v: %s", name, err, out)
		}
	})
	u, err := user.Lookup(name)
	require.NoError(t, err)
	require.True(t, len(u.Uid) == 4 && u.Uid >= "1000" && u.Uid <= "1999", "uid %s: a person's account", u.Uid)

	// A home in HDFS, as a person with an account would have: nothing but the helper stops the job.
	home := hdfs.HomeDir(name)
	c.Hadoop(t, "hdfs", "dfs", "-mkdir", "-p", home)
	c.Hadoop(t, "hdfs", "dfs", "-chown", name, home)
	t.Cleanup(func() { c.Hadoop(t, "hdfs", "dfs", "-rm", "-r", "-f", "-skipTrash", home) })

	marker := clustertest.ContainerDir(t) + "/ran"
	stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, []string{"HADOOP_USER_NAME=" + name, "XDG_CACHE_HOME=" + t.TempDir()},
		"run", "--output", "json", "--worker", "1c,256m", "--", "sh", "-c", "id -un > "+marker)
	require.Equal(t, exitJobFailed, code, stderr)
	r := runJSON(t, stdout)
	require.Equal(t, "FAILED", r.FinalStatus)
	require.Contains(t, r.Diagnostics, "exitCode=2", "the helper refuses the account (exit code 2): %s", r.Diagnostics)
	require.Contains(t, r.Diagnostics, "user "+name+" is not one of the test cluster's users", "the helper's reason reaches the diagnostics")
	require.NoFileExists(t, marker, "the job ran")
}
