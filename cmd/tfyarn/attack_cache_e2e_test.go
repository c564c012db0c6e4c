//go:build e2e

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// attackUser is one side of an attack test: who it is and how to act as
// it. The attack functions below take the cluster and three of these, so
// that another profile (Kerberos: ticket caches instead of
// HADOOP_USER_NAME) reuses them with users of its own.
type attackUser struct {
	Name string // the HDFS short name
	// Env is the environment tfyarn runs with as this user
	// (HADOOP_USER_NAME=..., or KRB5CCNAME=...), with a local cache
	// directory of its own (XDG_CACHE_HOME).
	Env []string
	// HDFS connects a raw HDFS client acting as this user: for what
	// tfyarn never does (rewriting a file in place, listing another
	// user's directories).
	HDFS func(t *testing.T) *gohdfs.Client
}

// simpleAttackUsers are, on a plain cluster (simple auth), the HDFS
// superuser (the OS user that started the cluster) and two fresh users
// alice and bob, each with a home directory and local caches of their own.
func simpleAttackUsers(t *testing.T, c *clustertest.Cluster) (admin, alice, bob attackUser) {
	t.Helper()
	id := randomHex(t)
	local := t.TempDir()
	as := func(name string) attackUser {
		return attackUser{
			Name: name,
			Env:  []string{"HADOOP_USER_NAME=" + name, "XDG_CACHE_HOME=" + filepath.Join(local, name)},
			HDFS: func(t *testing.T) *gohdfs.Client { return simpleHDFSClient(t, c, name) },
		}
	}
	admin = as(currentOSUser(t))
	alice, bob = as(c.User(t, "tfyarn-alice-"+id)), as(c.User(t, "tfyarn-bob-"+id))
	for _, u := range []attackUser{alice, bob} {
		giveHome(t, admin.HDFS(t), u.Name)
	}
	return admin, alice, bob
}

// freshUser is a new user of the plain cluster, named prefix and random hex, with an HDFS home
// directory and a local cache of its own: for a test that a parallel test's submissions as the
// shared test user could upset.
func freshUser(t *testing.T, c *clustertest.Cluster, prefix string) attackUser {
	t.Helper()
	name := c.User(t, prefix+randomHex(t))
	giveHome(t, simpleHDFSClient(t, c, currentOSUser(t)), name)
	return attackUser{Name: name, Env: []string{"HADOOP_USER_NAME=" + name, "XDG_CACHE_HOME=" + filepath.Join(t.TempDir(), name)},
		HDFS: func(t *testing.T) *gohdfs.Client { return simpleHDFSClient(t, c, name) }}
}

// giveHome makes user's HDFS home directory as the superuser (root), removed after the test.
func giveHome(t *testing.T, root *gohdfs.Client, user string) {
	t.Helper()
	home := hdfs.HomeDir(user)
	require.NoError(t, root.MkdirAll(home, 0o755))
	require.NoError(t, root.Chown(home, user, "supergroup"))
	t.Cleanup(func() { _ = root.RemoveAll(home) })
}

// simpleHDFSClient is colinmarc's client acting as user on the plain
// cluster's NameNode.
func simpleHDFSClient(t *testing.T, c *clustertest.Cluster, user string) *gohdfs.Client {
	t.Helper()
	nn := strings.TrimPrefix(c.Facts["fs.defaultFS"], "hdfs://")
	require.NotEmpty(t, nn, "fs.defaultFS in the cluster's facts")
	cl, err := gohdfs.NewClient(gohdfs.ClientOptions{Addresses: []string{nn}, User: user})
	require.NoError(t, err)
	t.Cleanup(func() { cl.Close() })
	return cl
}

// Issue 18 point 1: bob plants entries with the right bytes (the tfyarn
// binary and alice's script) in the shared cache directory; alice runs a
// job through it; bob rewrites both in place keeping their length,
// modification time, owner and file id (truncate, append, set times);
// alice's next job, on a NodeManager that has not localized them yet, must
// not run bob's bytes (they would touch a marker file), and succeeds
// through alice's own cache.
func TestE2EAttackSharedCacheRewrite(t *testing.T) {
	t.Parallel()
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	admin, alice, bob := simpleAttackUsers(t, c)
	attackSharedCacheRewrite(t, c, bin, admin, alice, bob)
}

func attackSharedCacheRewrite(t *testing.T, c *clustertest.Cluster, bin string, admin, alice, bob attackUser) {
	id := randomHex(t)
	dir := "/tmp/tfyarn-attack-shared-" + id
	stdout, stderr, code := execTfyarn(t, c, bin, admin.Env, "cache", "init", dir)
	require.Equal(t, exitOK, code, stdout+stderr)
	root := admin.HDFS(t)
	t.Cleanup(func() { _ = root.RemoveAll(dir) })

	// What bob's bytes do when they run: touch a file in a directory
	// that any container user can write.
	markers := clustertest.ContainerDir(t)
	marker := filepath.Join(markers, "bob-ran")
	goodScript := []byte("echo alice-ok-" + id + "\n")
	evilScript := samePadded("touch "+marker+"\n", len(goodScript)+len(marker))
	goodScript = samePadded(string(goodScript), len(evilScript))
	script := filepath.Join(t.TempDir(), "probe.sh")
	require.NoError(t, os.WriteFile(script, goodScript, 0o644))
	binBytes, err := os.ReadFile(bin)
	require.NoError(t, err)
	evilBin := samePadded("#!/bin/sh\ntouch "+marker+"\n", len(binBytes))

	// Bob plants both, with the right content, before alice uses the directory.
	bc := bob.HDFS(t)
	plantedScript := hdfs.SharedPath(dir, sha256Hex(goodScript), "probe.sh")
	plantedBin := hdfs.SharedPath(dir, sha256Hex(binBytes), "tfyarn")
	// colinmarc sets times in whole seconds: bob gives his entries a whole
	// second from the start, so that he can set it back exactly.
	planted := time.Now().Truncate(time.Second)
	for p, data := range map[string][]byte{plantedScript: goodScript, plantedBin: binBytes} {
		writeHDFS(t, bc, p, data)
		require.NoError(t, bc.Chtimes(p, planted, planted))
	}

	run := func(extra ...string) string {
		t.Helper()
		args := append([]string{"run", "--worker", "1c,256m", "--name", "e2e-attack-shared", "--cache-dir", dir,
			"--files", script, "--output", "json"}, extra...)
		args = append(args, "--", "sh", "probe.sh")
		stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, alice.Env, args...)
		t.Logf("alice: %s\n%s", stdout, stderr)
		require.NoFileExists(t, marker, "bob's bytes ran in alice's job")
		require.Equal(t, exitOK, code, stderr)
		appID := runJSON(t, stdout).AppID
		require.Contains(t, taskStdout(t, c, bin, alice, appID, "alice-ok-"), "alice-ok-"+id)
		return stderr
	}
	first := run() // the default partition: NodeManager 0

	// Bob rewrites both in place: same length, modification time, owner, file id.
	for p, evil := range map[string][]byte{plantedScript: evilScript, plantedBin: evilBin} {
		rewriteInPlace(t, bc, p, evil)
	}

	// Alice's next job, AM and task on NodeManager 1 (the gpu label),
	// which has localized neither entry.
	second := run("--queue", "ml-gpu", "--node-label", "gpu", "--am-node-label", "gpu")

	// Both times alice said, once each, why bob's entries were passed over.
	for _, stderr := range []string{first, second} {
		for _, p := range []string{plantedScript, plantedBin} {
			require.Equal(t, 1, strings.Count(stderr, "shared cache: not using "+p+" (owned by "+bob.Name+
				"): another user's entry is never used (its owner can rewrite it at any time); the directory's owner can make it everyone's with tfyarn cache adopt"+
				"; shipping it through your own cache "+hdfs.CacheDir(alice.Name)+" instead\n"), stderr)
		}
	}
}

// samePadded is s followed by a shell comment line filling it to n bytes.
func samePadded(s string, n int) []byte {
	if pad := n - len(s) - 2; pad >= 0 {
		return []byte(s + "#" + strings.Repeat("x", pad) + "\n")
	}
	panic("samePadded: " + s + " is longer than the length asked")
}

// writeHDFS creates p with data (0644), failing the test otherwise.
func writeHDFS(t *testing.T, cl *gohdfs.Client, p string, data []byte) {
	t.Helper()
	w, err := cl.Create(p)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	closeHDFS(t, w)
}

// closeHDFS completes a file, waiting out the NameNode's "not yet".
func closeHDFS(t *testing.T, w *gohdfs.FileWriter) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		err := w.Close()
		if err == nil || !gohdfs.IsErrReplicating(err) || time.Now().After(deadline) {
			require.NoError(t, err)
			return
		}
	}
}

// rewriteInPlace replaces p's bytes with data (of the same length) the way
// its owner can: truncate to 0, append, and set the times back, so that
// length, modification time, owner and file id are what they were.
func rewriteInPlace(t *testing.T, cl *gohdfs.Client, p string, data []byte) {
	t.Helper()
	before, err := cl.Stat(p)
	require.NoError(t, err)
	require.EqualValues(t, len(data), before.Size())
	done, err := cl.Truncate(p, 0)
	require.NoError(t, err)
	require.True(t, done, "truncating to 0 needs no block recovery")
	w, err := cl.Append(p)
	require.NoError(t, err)
	_, err = w.Write(data)
	require.NoError(t, err)
	closeHDFS(t, w)
	require.NoError(t, cl.Chtimes(p, before.(*gohdfs.FileInfo).AccessTime(), before.ModTime()))
	after, err := cl.Stat(p)
	require.NoError(t, err)
	require.Equal(t, before.Size(), after.Size())
	require.Equal(t, before.ModTime().UnixMilli(), after.ModTime().UnixMilli())
	require.Equal(t, before.(*gohdfs.FileInfo).Owner(), after.(*gohdfs.FileInfo).Owner())
	type fileID interface{ GetFileId() uint64 }
	require.Equal(t, before.Sys().(fileID).GetFileId(), after.Sys().(fileID).GetFileId())
	f, err := cl.Open(p)
	require.NoError(t, err)
	got, err := io.ReadAll(f)
	f.Close()
	require.NoError(t, err)
	require.Equal(t, data, got, "rewritten")
}

// taskStdout is worker:0's stdout of appID once it contains want (through
// `tfyarn logs` as user; on the Kerberos cluster, which aggregates no logs,
// from the NodeManagers' local log directories).
func taskStdout(t *testing.T, c *clustertest.Cluster, bin string, user attackUser, appID, want string) string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		if c.Kerberos != nil {
			// MiniYARNCluster's NodeManagers' log dirs, or those of NodeManager processes (TC_NM_HOSTS=1).
			matches, err := filepath.Glob(filepath.Join(c.Dir, "data", "yarn", "*", "*", "*logDir*", appID, "container_*_000002", "stdout"))
			require.NoError(t, err)
			own, err := filepath.Glob(filepath.Join(c.Dir, "data", "nm-*", "logs", appID, "container_*_000002", "stdout"))
			require.NoError(t, err)
			matches = append(matches, own...)
			for _, m := range matches {
				if b, err := os.ReadFile(m); err == nil && strings.Contains(string(b), want) {
					return string(b)
				}
			}
			require.True(t, time.Now().Before(deadline), "worker:0's stdout of %s with %q in %v", appID, want, matches)
			continue
		}
		stdout, stderr, code := execTfyarn(t, c, bin, user.Env, "logs", appID, "--task", "worker:0", "--file", "stdout")
		if code == exitOK && strings.Contains(stdout, want) {
			return stdout
		}
		require.True(t, time.Now().Before(deadline), "worker:0's stdout of %s with %q: %s%s", appID, want, stdout, stderr)
	}
}

// Issue 18 point 5: what alice ships and runs through her own cache, and
// her job history, are not listable or readable by bob (even knowing a
// file's sha256); only the tfyarn binary is public. A cache and history
// left with the modes of earlier versions are closed by her next job. Her
// job still localizes and runs, and `tfyarn status` (history), `cache
// list` and `cache clean` still work for her.
func TestE2EAttackPrivateCache(t *testing.T) {
	t.Parallel()
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	admin, alice, bob := simpleAttackUsers(t, c)
	attackPrivateCache(t, c, bin, admin, alice, bob)
}

func attackPrivateCache(t *testing.T, c *clustertest.Cluster, bin string, admin, alice, bob attackUser) {
	id := randomHex(t)
	work := t.TempDir()
	secret := []byte("the password is " + id + "\n")
	script := []byte("print('job-ran', open('secret.txt').read().strip())\n")
	require.NoError(t, os.WriteFile(filepath.Join(work, "secret.txt"), secret, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(work, "secret_job.py"), script, 0o644))
	binBytes, err := os.ReadFile(bin)
	require.NoError(t, err)
	scriptPath := hdfs.CachePath(alice.Name, sha256Hex(script), "secret_job.py")
	secretPath := hdfs.CachePath(alice.Name, sha256Hex(secret), "secret.txt")
	binPath := hdfs.CachePath(alice.Name, sha256Hex(binBytes), "tfyarn")

	// What an earlier tfyarn left: everything open to others.
	ac := alice.HDFS(t)
	require.NoError(t, ac.MkdirAll(path.Dir(scriptPath), 0o755))
	require.NoError(t, ac.MkdirAll(hdfs.HistoryDir(alice.Name), 0o755))
	w, err := ac.CreateFile(scriptPath, 1, 128<<20, 0o644)
	require.NoError(t, err)
	_, err = w.Write(script)
	require.NoError(t, err)
	closeHDFS(t, w)

	stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, alice.Env, "run", "--worker", "1c,256m", "--name", "e2e-attack-private",
		"--files", filepath.Join(work, "secret.txt"), "--output", "json", filepath.Join(work, "secret_job.py"))
	t.Logf("alice: %s\n%s", stdout, stderr)
	require.Equal(t, exitOK, code, stderr)
	appID := runJSON(t, stdout).AppID
	require.Contains(t, taskStdout(t, c, bin, alice, appID, "job-ran"), "job-ran the password is "+id)

	// Bob can list and read none of it, not even knowing the names.
	bc := bob.HDFS(t)
	for _, d := range []string{hdfs.BaseDir(alice.Name), hdfs.CacheDir(alice.Name), path.Dir(scriptPath), hdfs.HistoryDir(alice.Name)} {
		_, err := bc.ReadDir(d)
		require.ErrorIs(t, err, os.ErrPermission, "bob lists %s", d)
	}
	for _, p := range []string{scriptPath, secretPath, hdfs.HistoryPath(alice.Name, appID)} {
		_, err := readHDFS(bc, p)
		require.ErrorIs(t, err, os.ErrPermission, "bob reads %s", p)
	}
	got, err := readHDFS(bc, binPath)
	require.NoError(t, err, "the launcher is public: it is tfyarn, nothing of alice's")
	require.Equal(t, binBytes, got)

	// Modes, as the NameNode has them: earlier ones closed.
	root := admin.HDFS(t)
	for p, want := range map[string]os.FileMode{
		hdfs.BaseDir(alice.Name):            0o711,
		hdfs.CacheDir(alice.Name):           0o711,
		path.Dir(scriptPath):                0o711,
		scriptPath:                          0o600,
		secretPath:                          0o600,
		binPath:                             0o644,
		hdfs.HistoryDir(alice.Name):         0o700,
		hdfs.HistoryPath(alice.Name, appID): 0o600,
	} {
		fi, err := root.Stat(p)
		require.NoError(t, err, p)
		require.Equal(t, want, fi.Mode().Perm(), "%s is %04o", p, fi.Mode().Perm())
	}
	// Localized PRIVATE (alice's own NodeManager cache), but the launcher PUBLIC.
	require.Zero(t, publicDownloads(t, c, scriptPath))
	require.Zero(t, publicDownloads(t, c, secretPath))
	// Once per node that ran one of the job's containers (the AM's and the task's may differ).
	require.Positive(t, publicDownloads(t, c, binPath))
	require.LessOrEqual(t, publicDownloads(t, c, binPath), 2)

	// tfyarn status: the history for alice, its privacy for bob.
	status := func(u attackUser) statusView {
		stdout, stderr, code := execTfyarn(t, c, bin, u.Env, "status", appID, "--output", "json")
		require.Equal(t, exitOK, code, stderr)
		var v statusView
		require.NoError(t, json.Unmarshal([]byte(stdout), &v), stdout)
		return v
	}
	mine := status(alice)
	require.NotNil(t, mine.History, mine.HistoryError)
	require.Contains(t, mine.History.Job.Command, "secret_job.py")
	theirs := status(bob)
	require.Nil(t, theirs.History)
	require.Equal(t, "the history record at "+hdfs.HistoryPath(alice.Name, appID)+" is private to "+alice.Name+
		" (the command line and stderr tails are theirs)", theirs.HistoryError)

	// tfyarn cache list and clean, for alice.
	stdout, stderr, code = execTfyarn(t, c, bin, alice.Env, "cache", "list", "--output", "json")
	require.Equal(t, exitOK, code, stderr)
	var l cacheListing
	require.NoError(t, json.Unmarshal([]byte(stdout), &l))
	var names []string
	for _, e := range l.Entries {
		names = append(names, e.Name)
	}
	require.ElementsMatch(t, []string{"secret_job.py", "secret.txt", "tfyarn"}, names)
	stdout, stderr, code = execTfyarn(t, c, bin, alice.Env, "cache", "clean", "--older-than", "0d")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "removed 3 files")
	_, err = root.Stat(scriptPath)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// readHDFS reads the whole file p; a refusal of the NameNode is
// os.ErrPermission (colinmarc passes a refused read on unwrapped).
func readHDFS(cl *gohdfs.Client, p string) ([]byte, error) {
	f, err := cl.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil && strings.Contains(err.Error(), "AccessControlException") {
		err = fmt.Errorf("%w: %v", os.ErrPermission, err)
	}
	return b, err
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Issue 33 item 4: bob creates the shared cache directory alice's jobs
// are told to use before any administrator does, and puts his own bytes
// there under the names of alice's files (the tfyarn binary and her
// script), in his name: as the directory's owner he "adopted" them. Then,
// in a directory the superuser made but below one bob owns (he may rename
// it and put his own in its place). Alice's jobs must not run his bytes
// (they would touch a marker file), must say in one line that the
// directory is not trusted and why, and succeed through her own cache.
// `tfyarn cache init` below bob's directory is refused.
func TestE2EAttackSharedCacheSquat(t *testing.T) {
	t.Parallel()
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	admin, alice, bob := simpleAttackUsers(t, c)
	id := randomHex(t)
	squatted := "/tmp/tfyarn-attack-squat-" + id // the directory alice is told to use: bob's, made first
	bobs := squatted + "-bobs"                   // a directory of bob's, for one an administrator makes below
	bc := bob.HDFS(t)
	for _, d := range []string{squatted, bobs} {
		require.NoError(t, bc.MkdirAll(d, 0o755))
	}
	require.NoError(t, bc.Chmod(squatted, 0o1777))
	root := admin.HDFS(t)
	t.Cleanup(func() { _ = root.RemoveAll(squatted); _ = root.RemoveAll(bobs) })

	markers := clustertest.ContainerDir(t)
	marker := filepath.Join(markers, "bob-ran")
	goodScript := []byte("echo alice-ok-" + id + "\n")
	evilScript := samePadded("touch "+marker+"\n", len(goodScript)+len(marker))
	goodScript = samePadded(string(goodScript), len(evilScript))
	script := filepath.Join(t.TempDir(), "probe.sh")
	require.NoError(t, os.WriteFile(script, goodScript, 0o644))
	binBytes, err := os.ReadFile(bin)
	require.NoError(t, err)
	evilBin := samePadded("#!/bin/sh\ntouch "+marker+"\n", len(binBytes))
	writeHDFS(t, bc, hdfs.SharedPath(squatted, sha256Hex(goodScript), "probe.sh"), evilScript)
	writeHDFS(t, bc, hdfs.SharedPath(squatted, sha256Hex(binBytes), "tfyarn"), evilBin)

	run := func(dir string) string {
		t.Helper()
		args := []string{"run", "--worker", "1c,256m", "--name", "e2e-attack-squat", "--cache-dir", dir,
			"--files", script, "--output", "json", "--", "sh", "probe.sh"}
		stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, alice.Env, args...)
		t.Logf("alice: %s\n%s", stdout, stderr)
		require.NoFileExists(t, marker, "bob's bytes ran in alice's job")
		require.Equal(t, exitOK, code, stderr)
		appID := runJSON(t, stdout).AppID
		require.Contains(t, taskStdout(t, c, bin, alice, appID, "alice-ok-"), "alice-ok-"+id)
		return stderr
	}
	who := bob.Name + ", who is neither the HDFS superuser (" + admin.Name + ") nor an administrator named in tfyarn.cache.trusted-owners"
	own := "; shipping the job's files through your own cache " + hdfs.CacheDir(alice.Name) + " instead\n"
	stderr := run(squatted)
	require.Equal(t, 1, strings.Count(stderr, "shared cache "+squatted+" is not trusted: it is owned by "+who+" (that owner could replace any entry)"+own), stderr)
	require.NotContains(t, stderr, "trusting entries")

	// The superuser's directory below bob's: bob may rename it away.
	below := bobs + "/admins"
	stdout, stderr, code := execTfyarn(t, c, bin, admin.Env, "cache", "init", below)
	require.Equal(t, exitUsage, code, stdout+stderr)
	require.Equal(t, "tfyarn: shared cache "+below+" is not trusted: "+bobs+" above it is owned by "+who+" (that owner could rename what it holds)\n", stderr)
	_, err = root.Stat(below)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing made")
	require.NoError(t, root.MkdirAll(below, 0o755))
	require.NoError(t, root.Chmod(below, 0o1777))
	stderr = run(below)
	require.Equal(t, 1, strings.Count(stderr, "shared cache "+below+" is not trusted: "+bobs+" above it is owned by "+who+" (that owner could rename what it holds)"+own), stderr)

	// The superuser's directory below /tmp (sticky, the superuser's) is
	// trusted, and the job says whom it trusts.
	trusted := "/tmp/tfyarn-attack-squat-ok-" + id
	stdout, stderr, code = execTfyarn(t, c, bin, admin.Env, "cache", "init", trusted)
	require.Equal(t, exitOK, code, stdout+stderr)
	t.Cleanup(func() { _ = root.RemoveAll(trusted) })
	stderr = run(trusted)
	require.Equal(t, 1, strings.Count(stderr, "shared cache "+trusted+": trusting entries adopted by "+admin.Name+" (the HDFS superuser)\n"), stderr)
	require.NotContains(t, stderr, "not trusted")
}
