//go:build e2e

package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// Shipping a Python environment, files, archives and sources with a job,
// on the plain cluster:
//
//	go test -tags e2e -run E2EEnv ./cmd/tfyarn/
func TestE2EEnv(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	t.Run("venv", func(t *testing.T) {
		t.Parallel()
		testEnvVenv(t, c, bin)
	})
	t.Run("files", func(t *testing.T) {
		t.Parallel()
		testEnvFilesArchivesSrc(t, c, bin)
	})
	t.Run("missing base interpreter", func(t *testing.T) {
		t.Parallel()
		testEnvMissingBase(t, c, bin)
	})
	t.Run("symlink loop refused", func(t *testing.T) {
		t.Parallel()
		testEnvLinkLoop(t, c, bin)
	})
}

// A venv holding a link back into its own ancestry (ln -s .. lib/sub/up)
// would be packed and submitted, and every task would die in YARN's launch
// script (its find -L fails on the loop) with only "exit code 1" to read:
// run refuses it before creating anything, exit 2, one line naming the
// link; so does a --src-dir with one, and tfyarn pack.
func testEnvLinkLoop(t *testing.T, c *clustertest.Cluster, bin string) {
	// A user with a home, who could submit: nothing but the check stops it.
	user := c.User(t, "tfyarn-e2e-"+randomHex(t))
	home := hdfs.HomeDir(user)
	c.Hadoop(t, "hdfs", "dfs", "-mkdir", "-p", home)
	c.Hadoop(t, "hdfs", "dfs", "-chown", user, home)
	t.Cleanup(func() { c.Hadoop(t, "hdfs", "dfs", "-rm", "-r", "-f", "-skipTrash", home) })
	venv := makeVenv(t)
	require.NoError(t, os.MkdirAll(filepath.Join(venv, "lib", "sub"), 0o755))
	require.NoError(t, os.Symlink("..", filepath.Join(venv, "lib", "sub", "up")))
	src := filepath.Join(t.TempDir(), "src")
	require.NoError(t, os.MkdirAll(filepath.Join(src, "pkg"), 0o755))
	require.NoError(t, os.Symlink("../..", filepath.Join(src, "pkg", "top")))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--env", venv}, "tfyarn: env " + venv + `: lib/sub/up is a symbolic link to "..", a directory that holds the link itself`},
		{[]string{"--src-dir", src}, "tfyarn: src dir " + src + `: pkg/top is a symbolic link to "../..", a directory that holds the link itself`},
	} {
		args := append(append([]string{"run", "--worker", "1c,256m"}, tc.args...), "--", "true")
		stdout, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + user}, args...)
		require.Equal(t, exitUsage, code, "%v: %s", tc.args, stderr)
		require.Empty(t, stdout)
		require.True(t, strings.HasPrefix(stderr, tc.want), "%v: %q", tc.args, stderr)
		require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	}
	requireNothingCreatedFor(t, c, user)
	out := filepath.Join(t.TempDir(), "env.tar.gz")
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "pack", venv, "-o", out)
	require.Equal(t, exitUsage, code, stderr)
	require.Empty(t, stdout)
	require.Contains(t, stderr, `lib/sub/up is a symbolic link to ".."`)
	require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	require.NoFileExists(t, out)
}

// A venv holding a package the system python lacks: every task imports it.
// The same job again uploads nothing.
func testEnvVenv(t *testing.T, c *clustertest.Cluster, bin string) {
	venv := makeVenv(t)
	require.Error(t, exec.Command("python3", "-c", "import tfyarn_probe").Run(), "the system python must not have tfyarn_probe")

	args := []string{"run", "--worker", "2x1c,256m", "--name", "e2e-env-venv", "--env", venv, "--output", "json",
		"--", "python", "-c", "import sys, tfyarn_probe; print(tfyarn_probe.VALUE); print('PREFIX', sys.prefix)"}
	start := time.Now()
	stdout, stderr, code := execTfyarn(t, c, bin, nil, args...)
	t.Logf("first: %.1fs\nstdout: %s\nstderr: %s", time.Since(start).Seconds(), stdout, stderr)
	require.Equal(t, exitOK, code)
	r := runJSON(t, stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	require.Positive(t, r.UploadedBytes, "a new environment is uploaded")
	require.Regexp(t, `packed `+regexp.QuoteMeta(venv)+` \(venv, Python 3\.\d+\.\d+\): `, stderr)
	require.NotContains(t, stderr, "\r", "no progress bar on a pipe")

	logs := appLogs(t, c, r.AppID, 3) // the AM's and 2 tasks'
	require.Len(t, regexp.MustCompile(`(?m)^42$`).FindAllString(logs, -1), 2, "every task prints 42:\n%s", logs)
	// sys.prefix is the unpacked env in the container (./env → the NM's
	// localized copy), not the venv on this machine nor the base install.
	prefixes := regexp.MustCompile(`(?m)^PREFIX (.*)$`).FindAllStringSubmatch(logs, -1)
	require.Len(t, prefixes, 2)
	for _, p := range prefixes {
		require.True(t, strings.HasSuffix(p[1], "/env"), p[1])
	}

	start = time.Now()
	stdout, stderr, code = execTfyarn(t, c, bin, nil, args...)
	t.Logf("second: %.1fs\nstdout: %s\nstderr: %s", time.Since(start).Seconds(), stdout, stderr)
	require.Equal(t, exitOK, code)
	r = runJSON(t, stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	require.Zero(t, r.UploadedBytes, "the same environment packs to the same bytes, already in the cache")
	requireNoStaging(t, c, r.AppID)
}

// --files, --archives (zip and tar.gz) and --src-dir with a script inside
// it, under the venv.
func testEnvFilesArchivesSrc(t *testing.T, c *clustertest.Cluster, bin string) {
	venv := makeVenv(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "proj")
	write := func(p, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write(filepath.Join(src, "helper.py"), "GREETING = 'hello from helper'\n")
	write(filepath.Join(src, "main.py"), `import os, sys, helper, tfyarn_probe
print("HELPER", helper.GREETING, tfyarn_probe.VALUE)
print("DATA", open("data.csv").read().strip().replace("\n", "|"))
for top in ("vocab", "models"):
    for root, dirs, files in sorted(os.walk(top, followlinks=True)):
        for f in sorted(files):
            p = os.path.join(root, f)
            print("ENTRY", p, open(p).read().strip())
print("ARGS", " ".join(sys.argv[1:]))
`)
	data := filepath.Join(dir, "data.csv")
	write(data, "a,b\n1,2\n")

	zipPath := filepath.Join(dir, "vocab.zip")
	zf, err := os.Create(zipPath)
	require.NoError(t, err)
	zw := zip.NewWriter(zf)
	w, err := zw.Create("words/en.txt")
	require.NoError(t, err)
	_, err = w.Write([]byte("hello world\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, zf.Close())

	tgz := filepath.Join(dir, "models-v1.tar.gz")
	tf, err := os.Create(tgz)
	require.NoError(t, err)
	gz := gzip.NewWriter(tf)
	tw := tar.NewWriter(gz)
	content := []byte("weights\n")
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "m/w.bin", Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}))
	_, err = tw.Write(content)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	require.NoError(t, tf.Close())

	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--worker", "2x1c,256m", "--name", "e2e-env-files",
		"--success", "all", // a script means TensorFlow's rule: worker:0 decides and worker:1 may be stopped before it prints
		"--env", venv, "--src-dir", src, "--files", data, "--archives", zipPath+","+tgz+"#models",
		"--output", "json", filepath.Join(src, "main.py"), "--", "--epochs", "1")
	t.Logf("stdout: %s\nstderr: %s", stdout, stderr)
	require.Equal(t, exitOK, code)
	r := runJSON(t, stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	logs := appLogs(t, c, r.AppID, 3)
	for _, want := range []string{
		`(?m)^HELPER hello from helper 42$`,
		`(?m)^DATA a,b\|1,2$`,
		`(?m)^ENTRY vocab/words/en.txt hello world$`,
		`(?m)^ENTRY models/m/w.bin weights$`,
		`(?m)^ARGS --epochs 1$`,
	} {
		require.Len(t, regexp.MustCompile(want).FindAllString(logs, -1), 2, "%s in every task:\n%s", want, logs)
	}
}

// A venv whose base interpreter is not on the node: the job fails and its
// diagnostics carry the launcher's one-line reason.
func testEnvMissingBase(t *testing.T, c *clustertest.Cluster, bin string) {
	venv := filepath.Join(t.TempDir(), "venv")
	require.NoError(t, os.MkdirAll(filepath.Join(venv, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(venv, "pyvenv.cfg"),
		[]byte("home = /nonexistent/tfyarn/bin\nversion = 3.11.7\nexecutable = /nonexistent/tfyarn/bin/python3.11\n"), 0o644))
	require.NoError(t, os.Symlink("/nonexistent/tfyarn/bin/python3.11", filepath.Join(venv, "bin", "python")))
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--worker", "1c,256m", "--name", "e2e-env-nobase",
		"--env", venv, "--output", "json", "--", "python", "-c", "print('never')")
	t.Logf("stdout: %s\nstderr: %s", stdout, stderr)
	require.Equal(t, exitJobFailed, code)
	r := runJSON(t, stdout)
	require.Equal(t, "FAILED", r.FinalStatus)
	require.Contains(t, r.Diagnostics, "last stderr of worker:0: env: base interpreter /nonexistent/tfyarn/bin/python3.11 (Python 3.11.7) not found on this node; "+
		"a venv runs only where its base interpreter is installed at the same path")
	require.NotContains(t, r.Diagnostics, "\n")
}

// A venv made from a Python in a directory only root may enter (pyenv's
// under /root, say), submitted by root as alice: the NodeManager's launch
// script, running as alice, cannot follow the venv's bin/python into it and
// fails before tfyarn's launcher starts, leaving YARN only "find: ...
// Permission denied" from prelaunch.err. The task's failure (the job's
// diagnostics, run's task line) says which interpreter, which user, which
// node and what to do.
//
//	go test -tags e2e -run '^TestE2EEnvInterpreterClosedToUser$' ./cmd/tfyarn/
func TestE2EEnvInterpreterClosedToUser(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	require.Equal(t, "linux", c.Facts["executor"], "containers run as their users")
	require.Zero(t, os.Geteuid(), "the test runs as root, who may enter the closed directory")
	dir := clustertest.ContainerDir(t)
	closed := filepath.Join(dir, "closed")
	require.NoError(t, os.Mkdir(closed, 0o700))
	require.NoError(t, os.Chmod(closed, 0o700)) // whatever the umask
	python := filepath.Join(closed, "python3")
	require.NoError(t, os.Symlink("/usr/bin/python3", python))
	venv := filepath.Join(dir, "venv")
	out, err := exec.Command(python, "-m", "venv", "--without-pip", venv).CombinedOutput()
	require.NoError(t, err, "%s", out)
	link, err := os.Readlink(filepath.Join(venv, "bin", "python3"))
	require.NoError(t, err)
	require.Equal(t, python, link, "the venv's interpreter is the closed directory's")

	stdout, stderr, code := execTfyarnFor(t, c, bin, 4*time.Minute, []string{"HADOOP_USER_NAME=alice", "XDG_CACHE_HOME=" + t.TempDir()},
		"run", "--worker", "1c,256m", "--name", "e2e-env-closed", "--env", venv, "--output", "json", "--", "python", "-c", "print('never')")
	t.Logf("stdout: %s\nstderr: %s", stdout, stderr)
	require.Equal(t, exitJobFailed, code)
	r := runJSON(t, stdout)
	require.Equal(t, "FAILED", r.FinalStatus)
	require.Len(t, r.Tasks, 1)
	host, _, ok := strings.Cut(r.Tasks[0].Node, ":")
	require.True(t, ok, "node %q", r.Tasks[0].Node)
	want := "the job's Python environment links bin/python3 to " + python + ", which user alice cannot reach on " + host +
		" (a directory on its path is closed to alice: permission denied); make the environment from an interpreter every user can run, e.g. /usr/bin/python3 -m venv"
	require.Contains(t, r.Tasks[0].Failure, want)
	require.Contains(t, r.Diagnostics, want)
	require.NotContains(t, r.Diagnostics, "find:", "YARN's words replaced")
	require.Regexp(t, `worker:0 failed \(exit code 1: `+regexp.QuoteMeta(want), stderr, "run's task line")
}
