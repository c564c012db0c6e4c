//go:build e2e

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// A cache directory shared by users, on the plain cluster: alice's
// application puts the launcher and a new environment into a fresh 1777
// directory; bob does not use them (another user's entries), until the
// administrator adopts them (`tfyarn cache adopt`: verified copies in its
// name); then bob's application of the same environment uploads neither
// and names the very same HDFS files as alice's next application, which
// the NodeManager localized once for both (one public download, the same
// local copy). `tfyarn cache init` makes the directory. A file another
// user planted under its sha256 name with other bytes is not adopted, is
// refused, and bob's own copy used. A directory missing or not sticky
// fails before anything is created.
//
//	go test -tags e2e -count=1 -run E2ESharedCache ./cmd/tfyarn/
func TestE2ESharedCache(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	id := randomHex(t)
	alice, bob, mallory := c.User(t, "tfyarn-alice-"+id), c.User(t, "tfyarn-bob-"+id), c.User(t, "tfyarn-mallory-"+id)
	shared := "/tmp/tfyarn-shared-" + id
	c.Hadoop(t, "hdfs", "dfs", "-mkdir", "-p", hdfs.HomeDir(alice), hdfs.HomeDir(bob))
	// The administrator (the cluster's superuser) makes the directory, twice: the second is a no-op.
	for range 2 {
		stdout, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + c.Superuser()}, "cache", "init", shared)
		require.Equal(t, exitOK, code, stderr)
		require.Equal(t, shared+" is a shared cache directory (mode 1777): use it with tfyarn run --cache-dir "+shared+
			", or set tfyarn.cache.dir="+shared+" in the client configuration\n", stdout)
	}
	require.Regexp(t, `(?m)^drwxrwxrwt .* `+regexp.QuoteMeta(shared)+`$`, c.Hadoop(t, "hdfs", "dfs", "-ls", "-d", shared))
	c.Hadoop(t, "hdfs", "dfs", "-chown", alice, hdfs.HomeDir(alice))
	c.Hadoop(t, "hdfs", "dfs", "-chown", bob, hdfs.HomeDir(bob))
	t.Cleanup(func() {
		c.Hadoop(t, "hdfs", "dfs", "-rm", "-r", "-f", "-skipTrash", shared, hdfs.HomeDir(alice), hdfs.HomeDir(bob))
	})

	venv := makeVenv(t)
	nonce := make([]byte, 64<<10)
	_, _ = rand.Read(nonce)
	require.NoError(t, os.WriteFile(filepath.Join(venv, "nonce.bin"), nonce, 0o644)) // a new archive
	data := filepath.Join(t.TempDir(), "data.txt")
	good := []byte("the right data " + id + "\n")
	require.NoError(t, os.WriteFile(data, good, 0o644))
	sum := sha256.Sum256(good)
	planted := hdfs.SharedPath(shared, hex.EncodeToString(sum[:]), "data.txt")

	home := t.TempDir() // each user's local caches (packs, verifications) under home/<user>
	run := func(user string, extra ...string) (stdout, stderr string, code int) {
		// Queue ml-gpu: every task on the one gpu node, where the NodeManager's one localized
		// copy serves alice and bob alike.
		args := append([]string{"run", "--queue", "ml-gpu", "--worker", "1c,256m", "--name", "e2e-shared-cache", "--cache-dir", shared,
			"--env", venv, "--output", "json"}, extra...)
		args = append(args, "--", "sh", "-c", `echo "ENV $(readlink -f env.layer00)"; test ! -e data.txt || echo "DATA $(cat data.txt)"`)
		return execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + user, "XDG_CACHE_HOME=" + filepath.Join(home, user)}, args...)
	}
	envLine := regexp.MustCompile(`(?m)^ENV (\S+)$`)
	// The task's output, from its logs (too short-lived for run's live view).
	output := func(user, appID string) string {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
			stdout, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + user}, "logs", appID, "--task", "worker:0", "--file", "stdout")
			if code == exitOK && strings.Contains(stdout, "ENV ") {
				return stdout
			}
			require.True(t, time.Now().Before(deadline), "worker:0's stdout of %s: %s%s", appID, stdout, stderr)
		}
	}

	stdout, stderr, code := run(alice)
	t.Logf("alice: %s\n%s", stdout, stderr)
	require.Equal(t, exitOK, code)
	ra := runJSON(t, stdout)
	require.Positive(t, ra.UploadedBytes, "a fresh directory: the launcher and the env are uploaded")
	require.NotContains(t, stderr, "shared cache:", "alice's own files need no check")
	ma := envLine.FindStringSubmatch(output(alice, ra.AppID))
	require.NotNil(t, ma)
	envFile := path.Base(ma[1])
	// The venv ships in layers (README "In layers"): its base layer is
	// followed here, the other layers are entries like it.
	require.Regexp(t, `^[0-9a-f]{64}-env-layer\.base\.tar\.gz$`, envFile, "the env's base layer is the shared directory's entry")
	require.Contains(t, ma[1], "/filecache/", "localized PUBLIC")
	require.NotContains(t, ma[1], "/usercache/")
	listing := c.Hadoop(t, "hdfs", "dfs", "-ls", shared)
	require.Regexp(t, `-rw-r--r-- +1 `+alice+` .* `+regexp.QuoteMeta(shared+"/"+envFile)+`\n`, listing)
	require.Regexp(t, `-rw-r--r-- +1 `+alice+` .* `+regexp.QuoteMeta(shared)+`/[0-9a-f]{64}-tfyarn\n`, listing)

	// Mallory plants other bytes, of the right length, under data.txt's name.
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	ctx, fsm := contextAndFS(t, conf, mallory)
	_, err = fsm.UploadBytes(ctx, bytes.ToUpper(good), planted)
	require.NoError(t, err)

	// The administrator adopts what alice uploaded; mallory's planted file
	// is not adopted (its content is not its name's) and left alone.
	admin := currentOSUser(t)
	stdout, stderr, code = execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + admin}, "cache", "adopt", shared)
	t.Logf("adopt: %s\n%s", stdout, stderr)
	require.Equal(t, exitJobFailed, code)
	require.Regexp(t, `^(adopted `+regexp.QuoteMeta(shared)+`/[0-9a-f]{64}-(env-layer\.(base|group-00)\.tar\.gz|tfyarn) \(was `+alice+`'s, \d+ bytes\): now `+admin+`'s, used by everyone\n){3}`+
		`adopted 3 entries; 0 already the administrator's\n$`, stdout, "the launcher and the venv's two layers")
	require.Contains(t, stdout, shared+"/"+envFile+" (was "+alice+"'s")
	require.Equal(t, "tfyarn: not adopting "+planted+" (owned by "+mallory+"): its content's sha256 is "+sha256Hex(bytes.ToUpper(good))[:12]+
		", not the one its name says; it is left as it is (remove it: hdfs dfs -rm "+planted+")\n"+
		"tfyarn: 1 entry of "+shared+" not adopted\n", stderr)
	listing = c.Hadoop(t, "hdfs", "dfs", "-ls", shared)
	require.Regexp(t, `-rw-r--r-- +1 `+admin+` .* `+regexp.QuoteMeta(shared+"/"+envFile)+`\n`, listing)
	require.Regexp(t, `-rw-r--r-- +1 `+admin+` .* `+regexp.QuoteMeta(shared)+`/[0-9a-f]{64}-tfyarn\n`, listing)
	require.Regexp(t, `-rw-r--r-- +1 `+mallory+` .* `+regexp.QuoteMeta(planted)+`\n`, listing)

	stdout, stderr, code = run(bob, "--files", data)
	t.Logf("bob: %s\n%s", stdout, stderr)
	require.Equal(t, exitOK, code)
	rb := runJSON(t, stdout)
	require.Equal(t, int64(len(good)), rb.UploadedBytes, "only data.txt is uploaded (to bob's own cache): the adopted launcher and env are used")
	require.NotContains(t, stderr, "shared cache: verified", "nothing is read to be checked")
	refusal := "shared cache: not using " + planted + " (owned by " + mallory + "): another user's entry is never used"
	require.Equal(t, 1, strings.Count(stderr, refusal), "one line for the planted file:\n%s", stderr)
	require.Contains(t, stderr, "; shipping it through your own cache "+hdfs.CacheDir(bob)+" instead\n")
	require.Equal(t, 1, strings.Count(stderr, "shared cache:"), "the adopted entries are used without a word:\n%s", stderr)
	out := output(bob, rb.AppID)
	require.Contains(t, out, "DATA "+strings.TrimSpace(string(good))+"\n", "bob's task got bob's bytes")
	mb := envLine.FindStringSubmatch(out)
	require.NotNil(t, mb, out)
	require.Contains(t, mb[1], "/filecache/", "localized PUBLIC")
	require.NotEqual(t, ma[1], mb[1], "the adopted entry is a new file: downloaded again")
	require.Contains(t, c.Hadoop(t, "hdfs", "dfs", "-ls", planted), mallory, "the planted file is left alone")

	// Alice again: she uses the adopted entries too, the very copy the
	// NodeManager localized for bob.
	stdout, stderr, code = run(alice)
	t.Logf("alice again: %s\n%s", stdout, stderr)
	require.Equal(t, exitOK, code)
	ra2 := runJSON(t, stdout)
	require.Zero(t, ra2.UploadedBytes)
	require.NotContains(t, stderr, "shared cache:")
	ma2 := envLine.FindStringSubmatch(output(alice, ra2.AppID))
	require.NotNil(t, ma2)
	require.Equal(t, mb[1], ma2[1], "alice's task uses the copy the NodeManager localized for bob")
	require.Equal(t, 2, publicDownloads(t, c, shared+"/"+envFile), "the NodeManager downloaded the env once for alice, once after the adoption for both")

	// Bob again: nothing uploaded or read; the planted file is still
	// refused, and bob's own copy found.
	stdout, stderr, code = run(bob, "--files", data)
	t.Logf("bob again: %s\n%s", stdout, stderr)
	require.Equal(t, exitOK, code)
	require.Zero(t, runJSON(t, stdout).UploadedBytes)
	require.NotContains(t, stderr, "shared cache: verified")
	require.Equal(t, 1, strings.Count(stderr, refusal), stderr)
	require.Equal(t, 2, publicDownloads(t, c, shared+"/"+envFile))

	t.Run("unusable directories", func(t *testing.T) {
		carol := c.User(t, "tfyarn-carol-"+id)
		loose := shared + "-loose"
		c.Hadoop(t, "hdfs", "dfs", "-mkdir", "-p", loose)
		c.Hadoop(t, "hdfs", "dfs", "-chmod", "0777", loose)
		readOnly := shared + "-ro"
		c.Hadoop(t, "hdfs", "dfs", "-mkdir", "-p", readOnly)
		c.Hadoop(t, "hdfs", "dfs", "-chmod", "1755", readOnly)
		closed := shared + "-closed"
		c.Hadoop(t, "hdfs", "dfs", "-mkdir", "-p", closed+"/cache")
		c.Hadoop(t, "hdfs", "dfs", "-chmod", "1777", closed+"/cache")
		c.Hadoop(t, "hdfs", "dfs", "-chmod", "0700", closed)
		t.Cleanup(func() { c.Hadoop(t, "hdfs", "dfs", "-rm", "-r", "-f", "-skipTrash", loose, readOnly, closed) })
		fix := func(dir string) string {
			return "; an administrator creates it like /tmp: hdfs dfs -mkdir -p " + dir + " && hdfs dfs -chmod 1777 " + dir
		}
		withConf := copyConfDir(t, c.ConfDir, func(b []byte) []byte {
			return bytes.Replace(b, []byte("</configuration>"),
				[]byte("<property><name>tfyarn.cache.dir</name><value>"+shared+"-missing</value></property>\n</configuration>"), 1)
		})
		for _, tc := range []struct {
			env  []string
			args []string
			want string
		}{
			{nil, []string{"--cache-dir", shared + "-missing"},
				"tfyarn: shared cache directory " + shared + "-missing does not exist" + fix(shared+"-missing") + "\n"},
			{nil, []string{"--cache-dir", loose},
				"tfyarn: shared cache directory " + loose + " is not sticky (mode 0777, owner root): anyone could remove others' entries" + fix(loose) + "\n"},
			{nil, []string{"--cache-dir", readOnly},
				"tfyarn: shared cache directory " + readOnly + " is not writable by " + carol + " (mode 1755, owner root)" + fix(readOnly) + "\n"},
			{nil, []string{"--cache-dir", closed + "/cache"},
				"tfyarn: shared cache directory " + closed + "/cache cannot be reached by " + carol + " (a directory above it is closed to others)" + fix(closed+"/cache") + "\n"},
			{[]string{"HADOOP_USER_NAME=" + currentOSUser(t)}, []string{"--cache-dir", closed + "/cache"}, // the superuser passes, YARN's public localizer would not
				"tfyarn: shared cache directory " + closed + "/cache is below " + closed + ", which others may not enter (YARN would not localize its files as PUBLIC)" + fix(closed+"/cache") + "\n"},
			{[]string{"HADOOP_CONF_DIR=" + withConf}, nil,
				"tfyarn: shared cache directory " + shared + "-missing does not exist" + fix(shared+"-missing") +
					" (set by tfyarn.cache.dir in " + filepath.Join(withConf, "yarn-site.xml") + ")\n"},
		} {
			args := append(append([]string{"run", "--worker", "1c,256m"}, tc.args...), "--", "true")
			stdout, stderr, code := execTfyarn(t, c, bin, append([]string{"HADOOP_USER_NAME=" + carol}, tc.env...), args...)
			require.Equal(t, exitUsage, code, stderr)
			require.Empty(t, stdout)
			require.Equal(t, strings.ReplaceAll(tc.want, "owner root", "owner "+currentOSUser(t)), stderr)
		}
		requireNothingCreatedFor(t, c, carol)
	})
}

// publicDownloads counts the NodeManagers' public downloads of an HDFS path.
func publicDownloads(t *testing.T, c *clustertest.Cluster, p string) int {
	t.Helper()
	b := c.NodeManagerLogs(t)
	return len(regexp.MustCompile(`Downloading public resource: \{ hdfs://[^/]+`+regexp.QuoteMeta(p)+`,`).FindAll(b, -1))
}

// contextAndFS connects to the cluster's HDFS as user (simple auth).
func contextAndFS(t *testing.T, conf *hadoopconf.Config, user string) (context.Context, *hdfs.FS) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	fs, err := hdfs.Connect(ctx, conf, user)
	require.NoError(t, err)
	t.Cleanup(func() { fs.Close() })
	return ctx, fs
}

// currentOSUser started the cluster: the HDFS superuser, owner of what
// Hadoop's CLI creates in the tests.
func currentOSUser(t *testing.T) string {
	u, err := user.Current()
	require.NoError(t, err)
	return u.Username
}
