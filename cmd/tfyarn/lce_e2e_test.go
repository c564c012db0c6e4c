//go:build e2e

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// Issue 19 item 2: on the cluster whose NodeManagers run containers under YARN's
// LinuxContainerExecutor (testcluster/containerexecutor), a task runs as the Unix user who
// submitted the job, another user cannot read its directories or logs on the node, a conda env
// job succeeds, and a detached grandchild does not outlive the job.
//
//	go test -tags e2e -run '^TestE2ELinuxExecutor$' ./cmd/tfyarn/
func TestE2ELinuxExecutor(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t) // every test cluster runs containers as their users
	require.Equal(t, "linux", c.Facts["executor"], "the cluster's NodeManagers use LinuxContainerExecutor")
	alice := attackUser{Name: "alice", Env: []string{"HADOOP_USER_NAME=alice", "XDG_CACHE_HOME=" + t.TempDir()}}

	// The helper the NodeManagers run: root's, setuid and setgid, usable by their group alone.
	st, err := os.Stat(filepath.Join(c.Dir, "bin", "container-executor"))
	require.NoError(t, err)
	sys := st.Sys().(*syscall.Stat_t)
	group, err := user.LookupGroup("tfyarnnm")
	require.NoError(t, err)
	require.Equal(t, uint32(0), sys.Uid)
	require.Equal(t, group.Gid, strconv.Itoa(int(sys.Gid)))
	require.Equal(t, os.ModeSetuid|os.ModeSetgid|0o050, st.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModePerm), "mode 6050")

	t.Run("jobs", func(t *testing.T) {
		t.Run("user_and_privacy", func(t *testing.T) {
			t.Parallel()
			lceUserAndPrivacy(t, c, bin, alice)
		})
		t.Run("conda_env", func(t *testing.T) {
			t.Parallel()
			lceCondaEnv(t, c, bin, alice)
		})
		t.Run("root_refused", func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, []string{"HADOOP_USER_NAME=root"}, "run", "--output", "json", "--worker", "1c,256m", "--", "true")
			require.Equal(t, exitJobFailed, code, stderr)
			r := runJSON(t, stdout)
			require.Equal(t, "FAILED", r.FinalStatus)
			require.Contains(t, r.Diagnostics, "exitCode=2", "the helper refuses root (exit code 2): %s", r.Diagnostics)
			require.Contains(t, r.Diagnostics, "user root is banned", "the helper's reason reaches the diagnostics")
		})
		t.Run("memory_limit", func(t *testing.T) {
			t.Parallel()
			// The NodeManager's monitor kills the container through the helper (signal as the user).
			program := `import time; b = b"x" * (700 << 20); time.sleep(120)`
			stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice.Env, "run", "--worker", "1c,256m",
				"--output", "json", "--", "/usr/bin/python3", "-c", program)
			r := runJSON(t, stdout)
			require.Equal(t, exitJobFailed, code, stderr)
			require.Contains(t, r.Diagnostics, "exceeding its physical memory limit", r.Diagnostics)
			require.Contains(t, r.Diagnostics, "-104", r.Diagnostics)
			requireNoContainerProcess(t, r.AppID)
		})
		t.Run("detached_grandchild", func(t *testing.T) {
			t.Parallel()
			n, err := strconv.ParseUint(randomHex(t), 16, 64)
			require.NoError(t, err)
			sleep := fmt.Sprintf("303.%d", n)
			program := `(setsid sh -c "trap \"\" TERM HUP; exec sleep ` + sleep + `" &); sleep 2`
			stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice.Env, "run", "--output", "json", "--worker", "1c,256m", "--", "sh", "-c", program)
			require.Equal(t, exitOK, code, stderr)
			r := runJSON(t, stdout)
			require.Equal(t, "SUCCEEDED", r.FinalStatus)
			requireNoProcess(t, "sleep\x00"+sleep+"\x00")
			requireNoContainerProcess(t, r.AppID)
		})
	})
	// After alice's jobs: her directories exist on the NodeManagers.
	t.Run("helper_refuses_hostile_input", func(t *testing.T) {
		lceHostileInput(t, c)
	})
}

// lceUserAndPrivacy: alice's task reports `id -un` = alice, and while it runs, bob (a Unix user
// of this machine) can neither list nor read its working directory, its application directory
// or its log files, which alice can; once the job ended, they are deleted.
func lceUserAndPrivacy(t *testing.T, c *clustertest.Cluster, bin string, alice attackUser) {
	token := randomHex(t)
	release := "/tmp/tfyarn-lce-release-" + token
	t.Cleanup(func() { os.Remove(release) })
	program := `id -un; grep -E ':(cpu|memory):' /proc/self/cgroup; echo "content-` + token + `" > secret-` + token + `; echo "logged-` + token + `"; ` +
		`i=0; while [ ! -e ` + release + ` ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done`
	type result struct {
		stdout, stderr string
		code           int
	}
	done := make(chan result, 1)
	go func() {
		o, e, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice.Env, "run", "--output", "json", "--worker", "1c,256m", "--", "sh", "-c", program)
		done <- result{o, e, code}
	}()

	// The job's end while waiting is a failure with its output.
	ended := func() {
		select {
		case r := <-done:
			t.Fatalf("alice's job ended before the test released it (exit %d): %s\n%s", r.code, r.stdout, r.stderr)
		default:
		}
	}
	// NodeManager processes of their own keep data/nm-I/{local,logs}; MiniYARNCluster's, theirs below data/yarn.
	secret := waitGlob(t, ended, filepath.Join(c.Dir, "data", "nm-*", "local", "usercache", "alice", "appcache", "application_*", "container_*", "secret-"+token),
		filepath.Join(c.Dir, "data", "yarn", "*", "*", "*localDir*", "usercache", "alice", "appcache", "application_*", "container_*", "secret-"+token))
	workDir := filepath.Dir(secret)
	appDir := filepath.Dir(workDir)
	container, app := filepath.Base(workDir), filepath.Base(appDir)
	logFile := waitGlob(t, ended, filepath.Join(c.Dir, "data", "nm-*", "logs", app, container, "stdout"),
		filepath.Join(c.Dir, "data", "yarn", "*", "*", "*logDir*", app, container, "stdout"))
	var logged string
	for deadline := time.Now().Add(3 * time.Minute); !strings.Contains(logged, "logged-"+token); time.Sleep(200 * time.Millisecond) {
		ended()
		b, err := os.ReadFile(logFile)
		require.NoError(t, err)
		logged = string(b)
		require.True(t, time.Now().Before(deadline), "the task's stdout %s never said logged-%s: %q", logFile, token, logged)
	}
	lines := strings.Split(logged, "\n")
	require.Equal(t, "alice", lines[0], "the task's `id -un`")
	if c.Facts["cgroups"] != "none" {
		for _, ctl := range []string{"cpu", "memory"} {
			require.Regexp(t, `(?m)^\d+:`+ctl+`:`+c.Facts["cgroups"]+`/`+container+`$`, logged, "the task is in its container's %s cgroup", ctl)
		}
	}
	st, err := os.Stat(workDir)
	require.NoError(t, err)
	aliceAccount, err := user.Lookup("alice")
	require.NoError(t, err)
	require.Equal(t, aliceAccount.Uid, strconv.Itoa(int(st.Sys().(*syscall.Stat_t).Uid)), "the working directory belongs to alice")

	out, err := runAs(t, "alice", "cat", secret)
	require.NoError(t, err, "alice reads her own task's file: %s", out)
	require.Equal(t, "content-"+token+"\n", out)
	out, err = runAs(t, "alice", "cat", logFile)
	require.NoError(t, err, "alice reads her own task's log: %s", out)
	for _, attempt := range [][]string{
		{"cat", secret},
		{"ls", workDir},
		{"ls", appDir},
		{"cat", logFile},
		{"ls", filepath.Dir(logFile)},
	} {
		out, err := runAs(t, "bob", attempt...)
		require.Error(t, err, "bob ran %q on alice's task: %s", attempt, out)
		require.Contains(t, out, "Permission denied", "bob ran %q", attempt)
		require.NotContains(t, out, "content-"+token)
		require.NotContains(t, out, "logged-"+token)
	}

	require.NoError(t, os.WriteFile(release, nil, 0o644))
	select {
	case r := <-done:
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Equal(t, "SUCCEEDED", runJSON(t, r.stdout).FinalStatus)
	case <-time.After(4 * time.Minute):
		t.Fatalf("alice's job did not end within 4 minutes of its release")
	}
	// The NodeManager removes the application's directories through the helper (delete as user).
	for _, dir := range []string{appDir, filepath.Dir(filepath.Dir(logFile))} {
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
			if _, err := os.Lstat(dir); os.IsNotExist(err) {
				break
			}
			require.True(t, time.Now().Before(deadline), "%s still there 2 minutes after the job ended", dir)
		}
	}
}

// lceCondaEnv: a conda env (whose text files name the prefix it was built at) shipped by alice
// runs under LinuxContainerExecutor, with its prefix relocated to where the task's copy is. The
// launcher rewrites those files in place, so the env is localized PRIVATE (alice's own copy): the
// NodeManager's PUBLIC copy is root's, and the rewrite failed there ("env: relocating the conda
// environment: ... permission denied") before the client asked for a private copy.
func lceCondaEnv(t *testing.T, c *clustertest.Cluster, bin string, alice attackUser) {
	root := filepath.Join(t.TempDir(), "conda-env")
	// The system's interpreter: the users' tasks cannot enter root's home (pyenv).
	py, err := filepath.EvalSymlinks("/usr/bin/python3")
	require.NoError(t, err)
	version, err := exec.Command(py, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])").Output()
	require.NoError(t, err)
	for p, content := range map[string]string{
		"conda-meta/python-" + strings.TrimSpace(string(version)) + "-h0_0.json": "{}\n",
		"conda-meta/history":          "==> 2024-01-01 <==\n",
		"lib/pkgconfig/tfyarn-lce.pc": "prefix=" + root + "\nlibdir=${prefix}/lib\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, p), []byte(content), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "bin"), 0o755))
	require.NoError(t, os.Symlink(py, filepath.Join(root, "bin", "python")))

	program := `head -1 "$CONDA_PREFIX/lib/pkgconfig/tfyarn-lce.pc"; echo "prefix-is=$(readlink -f "$CONDA_PREFIX")"; python -c "import sys; print('python', sys.version_info[0])"`
	stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice.Env, "run", "--output", "json", "--worker", "1c,256m", "--env", root, "--", "sh", "-c", program)
	require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
	r := runJSON(t, stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	out := taskStdout(t, c, bin, alice, r.AppID, "python 3")
	prefix := ""
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "prefix-is="); ok {
			prefix = v
		}
	}
	require.NotEmpty(t, prefix, "CONDA_PREFIX in %q", out)
	require.Contains(t, out, "prefix="+prefix+"\n", "the env's .pc file names where the task's env really is")
	require.Contains(t, prefix, "/usercache/alice/", "the env is alice's own copy, not the NodeManager's public one")
	require.NotContains(t, out, "prefix="+root+"\n", "the prefix it was built at is gone")
}

// lceHostileInput runs the installed helper as the NodeManager does (root) with what a hostile
// caller could pass, and as bob, who is not in its group: each is refused with the exit code the
// NodeManager knows, and nothing outside the NodeManagers' directories is touched.
func lceHostileInput(t *testing.T, c *clustertest.Cluster) {
	helper := filepath.Join(c.Dir, "bin", "container-executor")
	out, err := runAs(t, "bob", helper, "--checksetup")
	require.Error(t, err, "bob ran the helper: %s", out)
	require.Contains(t, err.Error(), "permission denied")

	locals, err := filepath.Glob(filepath.Join(c.Dir, "data", "yarn", "*", "*", "*localDir*"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join(c.Dir, "data", "nm-*", "local"))
	require.NoError(t, err)
	locals = append(locals, more...)
	local := ""
	for _, l := range locals {
		if _, err := os.Stat(filepath.Join(l, "usercache", "alice")); err == nil {
			local = l
		}
	}
	require.NotEmpty(t, local, "no NodeManager local directory with alice's usercache among %v", locals)
	// A link alice plants in her own directory, towards a directory of root's.
	link := filepath.Join(local, "usercache", "alice", "appcache", "evil-"+randomHex(t))
	_, err = runAs(t, "alice", "ln", "-s", "/etc", link)
	require.NoError(t, err)
	t.Cleanup(func() { os.Remove(link) })

	// The log directory beside it: data/nm-I/logs beside data/nm-I/local; MiniYARNCluster's
	// NodeManagers keep both below one directory.
	logs := local
	if filepath.Base(local) == "local" {
		logs = filepath.Join(filepath.Dir(local), "logs")
	}
	app := "application_1764110000000_0001"
	cont := "container_1764110000000_0001_01_000002"
	priv := filepath.Join(local, "nmPrivate", app, cont)
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"delete outside", []string{"alice", "alice", "3", "/etc/hostname"}, 4},
		{"delete up and out", []string{"alice", "alice", "3", "../../../../../../../../etc/hostname", local}, 4},
		{"delete through a link", []string{"alice", "alice", "3", "usercache/alice/appcache/" + filepath.Base(link) + "/hostname", local}, 4},
		{"delete the cluster's data", []string{"alice", "alice", "3", "", filepath.Join(c.Dir, "data")}, 4},
		{"list as root", []string{"root", "root", "5", local}, 2},
		{"list as a system user", []string{"daemon", "daemon", "5", local}, 2},
		{"list outside", []string{"alice", "alice", "5", "/root"}, 4},
		{"launch in bob's directory", []string{"alice", "alice", "1", app, cont, filepath.Join(local, "usercache", "bob", "appcache", app, cont),
			filepath.Join(priv, "x.sh"), filepath.Join(priv, "x.tokens"), "--http", filepath.Join(priv, "x.pid"), local, logs, "cgroups=none"}, 4},
		{"launch joining a foreign cgroup", []string{"alice", "alice", "1", app, cont, filepath.Join(local, "usercache", "alice", "appcache", app, cont),
			filepath.Join(priv, "x.sh"), filepath.Join(priv, "x.tokens"), "--http", filepath.Join(priv, "x.pid"), local, logs, "cgroups=/sys/fs/cgroup/memory/tasks"}, 27},
		{"launch with another container's tokens", []string{"alice", "alice", "1", app, cont, filepath.Join(local, "usercache", "alice", "appcache", app, cont),
			filepath.Join(priv, "x.sh"), filepath.Join(local, "nmPrivate", app, "container_1764110000000_0001_01_000003", "x.tokens"), "--http", filepath.Join(priv, "x.pid"), local, logs, "cgroups=none"}, 4},
		{"docker", []string{"--run-docker", "/tmp/x"}, 3},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		out, err := exec.CommandContext(ctx, helper, tc.args...).CombinedOutput()
		cancel()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s: %s", tc.name, out)
		require.Equal(t, tc.code, ee.ExitCode(), "%s: %s", tc.name, out)
	}
	_, err = os.Stat("/etc/hostname")
	require.NoError(t, err, "/etc/hostname survived")
	_, err = os.Lstat(link)
	require.NoError(t, err, "the refused deletion left alice's link alone")
}

// waitGlob waits up to 3 minutes (a loaded 2-core machine: each localization starts a JVM) for
// pattern to match exactly one path, calling check between tries.
func waitGlob(t *testing.T, check func(), patterns ...string) string {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		check()
		var m []string
		for _, pattern := range patterns {
			more, err := filepath.Glob(pattern)
			require.NoError(t, err)
			m = append(m, more...)
		}
		if len(m) == 1 {
			return m[0]
		}
		require.True(t, time.Now().Before(deadline), "waited 3 minutes for one of %v, found %v", patterns, m)
	}
}

// runAs runs a command as the named Unix user (the test runs as root) and returns its
// combined output.
func runAs(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	u, err := user.Lookup(name)
	require.NoError(t, err)
	uid, err := strconv.Atoi(u.Uid)
	require.NoError(t, err)
	gid, err := strconv.Atoi(u.Gid)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}
