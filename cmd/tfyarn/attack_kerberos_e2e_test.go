//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"
	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/connect"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/jobreport"
)

// The attacks of issue 18 on the Kerberos cluster, where who is who is
// proven by a ticket: bob@EXAMPLE.COM, with his own ticket cache, against a
// job of alice@EXAMPLE.COM. On the plain cluster bob can name himself alice
// (HADOOP_USER_NAME); here he cannot, so what the plain tests can only show
// for another user name is shown here for another principal.
//
//	go test -tags e2e -run '^TestE2EAttackKerberos' ./cmd/tfyarn/

// bobEnv is the environment of bob's commands: his ticket cache instead of
// alice's, and, for good measure, alice's name where simple auth would take
// it (a Kerberized cluster must ignore it).
func bobEnv(c *clustertest.Cluster) []string {
	return []string{"KRB5CCNAME=FILE:" + c.Kerberos.Bob.CCache, "HADOOP_USER_NAME=alice"}
}

// hadoopAs runs one of Hadoop's own CLIs (testcluster/hadoop.sh) with the
// cluster's environment plus env, bounded; it returns stdout, stderr and
// the exit code.
func hadoopAs(t *testing.T, c *clustertest.Cluster, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.Root, "testcluster", "hadoop.sh"), args...)
	cmd.Env = c.Env(env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("hadoop.sh %s: %v", strings.Join(args, " "), err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// TestE2EAttackKerberosAMEndpoints: issue 18 point 2 on the Kerberos
// cluster. While alice's job runs, bob, with his own ticket (and
// HADOOP_USER_NAME=alice), gets from `tfyarn status` the ResourceManager's
// report only (no live task table, command line or task address), cannot
// read alice's status key in her staging directory, and his raw HTTP client
// on the AM's port (which the RM's report names) gets no 200 and none of
// alice's data; alice's own status shows her live table.
func TestE2EAttackKerberosAMEndpoints(t *testing.T) {
	c := clustertest.RequireKerberos(t)
	bin := clustertest.BuildTfyarn(t)
	release := filepath.Join(clustertest.ContainerDir(t), "release")
	marker := "alice-private-" + randomHex(t)
	name := "e2e-attack-krb-am-" + randomHex(t)
	run := startHeldRun(t, c, 3*time.Minute, release, bin, "run", "--name", name, "--worker", "1c,256m", "--output", "json", "--",
		"sh", "-c", fmt.Sprintf(`while [ ! -e %s ]; do sleep 0.2; done`, release), marker)
	appID := waitForRunning(t, c, bin, name)

	// alice's status (her ticket): the live table, her command line, the task's address.
	var live jobreport.Report
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(300 * time.Millisecond) {
		out, errOut, code := execTfyarn(t, c, bin, nil, "status", appID, "--output", "json")
		require.Equal(t, exitOK, code, errOut)
		var v statusView
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		if v.Live != nil && v.Live.Counts.Registered == 1 {
			live = *v.Live
			break
		}
		require.True(t, time.Now().Before(deadline), "alice's status shows her registered task within 1m: %s", out)
	}
	require.Contains(t, live.Job.Command, marker)
	taskAddr := net.JoinHostPort(live.Tasks[0].Host, strconv.Itoa(live.Tasks[0].Port))
	secrets := []string{marker, taskAddr, live.Tasks[0].ContainerID}

	t.Run("bob's tfyarn status", func(t *testing.T) {
		out, errOut, code := execTfyarn(t, c, bin, bobEnv(c), "status", appID, "--output", "json")
		require.Equal(t, exitOK, code, "the RM's report is bob's to read (the cluster has no ACLs): %s", errOut)
		var v statusView
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		require.Equal(t, "alice", v.User, "the application is alice's")
		require.Nil(t, v.Live, "bob got alice's live task table: %s", out)
		text, errText, _ := execTfyarn(t, c, bin, bobEnv(c), "status", appID)
		for _, s := range secrets {
			require.NotContains(t, out+errOut+text+errText, s)
		}
	})

	t.Run("bob reads alice's status key in HDFS", func(t *testing.T) {
		key := hdfs.StagingDir("alice", appID) + "/" + contract.StatusKeyName
		ls := c.Hadoop(t, "hdfs", "dfs", "-ls", key)
		require.Regexp(t, `(?m)^-rw------- .* alice .*`+key+`$`, ls, "alice's key is there, hers only")
		stdout, stderr, code := hadoopAs(t, c, bobEnv(c), "hdfs", "dfs", "-cat", key)
		require.NotEqual(t, 0, code, "bob read alice's status key: %q", stdout)
		require.Empty(t, stdout)
		require.Contains(t, stderr, "Permission denied: user=bob")
	})

	t.Run("bob's raw HTTP client on the AM's port", func(t *testing.T) {
		conf, err := hadoopconf.LoadDir(c.ConfDir)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		login, err := security.LoginKerberos(ctx, security.KerberosOptions{CCache: c.Kerberos.Bob.CCache, Krb5Conf: c.Kerberos.Krb5Config})
		require.NoError(t, err)
		require.Equal(t, c.Kerberos.Bob.Principal, login.Principal)
		rm, err := connect.RM(conf, login, yarn.ClientOptions{})
		require.NoError(t, err)
		defer rm.Close()
		id, err := yarn.ParseApplicationID(appID)
		require.NoError(t, err)
		r, err := rm.GetApplicationReport(ctx, id)
		require.NoError(t, err)
		am := net.JoinHostPort(r.GetHost(), strconv.Itoa(int(r.GetRpcPort())))
		hc := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		for _, p := range []string{contract.StatusPath, "/", "/index.html", contract.ProxiedPrefix} {
			req, err := http.NewRequestWithContext(ctx, "GET", "http://"+am+p, nil)
			require.NoError(t, err)
			resp, err := hc.Do(req)
			require.NoError(t, err, "GET %s", p)
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			require.NotEqual(t, http.StatusOK, resp.StatusCode, "GET %s answered bob: %s", p, body)
			for _, s := range append(secrets, `"app_id"`, "<table") {
				require.NotContains(t, string(body), s, "GET %s", p)
			}
		}
	})

	require.NoError(t, run.finish())
	require.Equal(t, "SUCCEEDED", runJSON(t, run.stdout.String()).FinalStatus)
}

// TestE2EAttackKerberosNodeManagerInjection: issue 18 point 4 on the
// Kerberos cluster, whose NodeManagers write the same launch scripts: the
// arguments and a --setenv value of alice's job that the NodeManager would
// expand ({{ }}, <CPS>, <LOG_DIR>) or bash would run reach her program byte
// for byte (non-UTF-8 included) and run nothing.
func TestE2EAttackKerberosNodeManagerInjection(t *testing.T) {
	t.Parallel()
	c := clustertest.RequireKerberos(t)
	bin := clustertest.BuildTfyarn(t)
	dir := clustertest.ContainerDir(t)
	marker := func(name string) string { return filepath.Join(dir, "pwned-"+name) }
	hostile := []string{"{{(touch " + marker("braces") + ")}}", "<CPS>", "<LOG_DIR>/x", "$(touch " + marker("dollar") + ")",
		"`touch " + marker("backquote") + "`", `'"\`, "\xff\xfe not UTF-8"}
	envValue := "{{(touch " + marker("env-braces") + ")}}$(touch " + marker("env-dollar") + ")<CPS>\xff"
	var want strings.Builder
	for _, a := range append(append([]string(nil), hostile...), envValue) {
		want.WriteString(hex.EncodeToString([]byte(a)) + "\n")
	}
	want.WriteString("DATA shipped\n") // hexArgsScript's last line: the --files link's content
	shipped := filepath.Join(dir, "shipped.csv")
	require.NoError(t, os.WriteFile(shipped, []byte("shipped"), 0o644))
	out := filepath.Join(dir, "krb.hex")
	args := append([]string{"run", "--name", "e2e-attack-krb-inject", "--worker", "1c,256m", "--output", "json",
		"--setenv", "HOSTILE=" + envValue, "--files", shipped + "#data.csv", "--", "sh", "-c", hexArgsScript, "sh", out}, hostile...)
	stdout, stderr, code := execTfyarn(t, c, bin, nil, args...)
	require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
	require.Equal(t, "SUCCEEDED", runJSON(t, stdout).FinalStatus)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, want.String(), string(got), "the program's arguments and $HOSTILE, in hex")
	found, err := filepath.Glob(marker("*"))
	require.NoError(t, err)
	require.Empty(t, found, "a user's bytes ran as a command")
}

// kerberosAttackUsers are, on the Kerberos cluster, the HDFS superuser (the
// service principal, whose short name started the NameNode), alice and bob,
// each acting with nothing but their own ticket cache, and each with a
// local cache directory of their own.
func kerberosAttackUsers(t *testing.T, c *clustertest.Cluster) (admin, alice, bob attackUser) {
	t.Helper()
	k := c.Kerberos
	local := t.TempDir()
	as := func(u clustertest.KerberosUser) attackUser {
		name, _, _ := strings.Cut(u.Principal, "@") // DEFAULT: the test users' principals have one component
		return attackUser{
			Name: name,
			Env:  []string{"KRB5CCNAME=FILE:" + u.CCache, "XDG_CACHE_HOME=" + filepath.Join(local, name)},
			HDFS: func(t *testing.T) *gohdfs.Client { return kerberosHDFSClient(t, c, u) },
		}
	}
	alice = as(clustertest.KerberosUser{Principal: k.Principal, CCache: k.CCache, Keytab: k.Keytab})
	return as(k.Admin), alice, as(k.Bob)
}

// kerberosHDFSClient is colinmarc's client authenticated by u's ticket
// cache on the Kerberos cluster's NameNode.
func kerberosHDFSClient(t *testing.T, c *clustertest.Cluster, u clustertest.KerberosUser) *gohdfs.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	login, err := security.LoginKerberos(ctx, security.KerberosOptions{CCache: u.CCache, Krb5Conf: c.Kerberos.Krb5Config})
	require.NoError(t, err)
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	pattern, ok := conf.NameNodePrincipal()
	require.True(t, ok, "dfs.namenode.kerberos.principal in the cluster's configuration")
	spn, _, _ := strings.Cut(pattern, "@")
	nn := strings.TrimPrefix(c.Facts["fs.defaultFS"], "hdfs://")
	cl, err := gohdfs.NewClient(gohdfs.ClientOptions{
		Addresses:                    []string{nn},
		User:                         login.User,
		KerberosClient:               login.Client,
		KerberosServicePrincipleName: spn,
		DataTransferProtection:       conf.DataTransferProtection(),
	})
	require.NoError(t, err)
	t.Cleanup(func() { cl.Close() })
	return cl
}

// TestE2EAttackKerberosSharedCacheRewrite: issue 18 point 1 on the Kerberos
// cluster (attackSharedCacheRewrite): bob, with his own ticket, plants the
// tfyarn binary and alice's script in a shared cache directory the
// superuser made, alice runs through it, bob rewrites both in place keeping
// length, modification time, owner and file id; alice's next job must not
// run his bytes.
func TestE2EAttackKerberosSharedCacheRewrite(t *testing.T) {
	t.Parallel()
	c := clustertest.RequireKerberos(t)
	bin := clustertest.BuildTfyarn(t)
	admin, alice, bob := kerberosAttackUsers(t, c)
	attackSharedCacheRewrite(t, c, bin, admin, alice, bob)
}

// TestE2EAttackKerberosPrivateCache: issue 18 point 5 on the Kerberos
// cluster. What alice ships through her own cache (a script, a --files
// secret) and her job's history are neither listable nor readable by bob
// with his own ticket, even knowing the files' names; `tfyarn status` gives
// alice her history and bob, even as HADOOP_USER_NAME=alice, only the
// sentence that it is private.
func TestE2EAttackKerberosPrivateCache(t *testing.T) {
	t.Parallel()
	c := clustertest.RequireKerberos(t)
	bin := clustertest.BuildTfyarn(t)
	_, alice, bob := kerberosAttackUsers(t, c)
	id := randomHex(t)
	work := t.TempDir()
	secret := []byte("the password is " + id + "\n")
	script := []byte("print('job-ran', open('secret.txt').read().strip())  # " + id + "\n")
	require.NoError(t, os.WriteFile(filepath.Join(work, "secret.txt"), secret, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(work, "secret_job.py"), script, 0o644))
	scriptPath := hdfs.CachePath(alice.Name, sha256Hex(script), "secret_job.py")
	secretPath := hdfs.CachePath(alice.Name, sha256Hex(secret), "secret.txt")

	stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, alice.Env, "run", "--worker", "1c,256m", "--name", "e2e-attack-krb-private",
		"--files", filepath.Join(work, "secret.txt"), "--output", "json", filepath.Join(work, "secret_job.py"))
	t.Logf("alice: %s\n%s", stdout, stderr)
	require.Equal(t, exitOK, code, stderr)
	appID := runJSON(t, stdout).AppID
	require.Contains(t, taskStdout(t, c, bin, alice, appID, "job-ran"), "job-ran the password is "+id)

	ac := alice.HDFS(t)
	for _, p := range []string{scriptPath, secretPath, hdfs.HistoryPath(alice.Name, appID)} {
		got, err := readHDFS(ac, p)
		require.NoError(t, err, "alice reads her own %s", p)
		require.NotEmpty(t, got)
	}
	bc := bob.HDFS(t)
	for _, d := range []string{hdfs.BaseDir(alice.Name), hdfs.CacheDir(alice.Name), path.Dir(scriptPath), hdfs.HistoryDir(alice.Name)} {
		_, err := bc.ReadDir(d)
		require.ErrorIs(t, err, os.ErrPermission, "bob lists %s", d)
	}
	for _, p := range []string{scriptPath, secretPath, hdfs.HistoryPath(alice.Name, appID)} {
		_, err := readHDFS(bc, p)
		require.ErrorIs(t, err, os.ErrPermission, "bob reads %s", p)
	}

	status := func(env []string) statusView {
		stdout, stderr, code := execTfyarn(t, c, bin, env, "status", appID, "--output", "json")
		require.Equal(t, exitOK, code, stderr)
		var v statusView
		require.NoError(t, json.Unmarshal([]byte(stdout), &v), stdout)
		return v
	}
	mine := status(alice.Env)
	require.NotNil(t, mine.History, mine.HistoryError)
	require.Contains(t, mine.History.Job.Command, "secret_job.py")
	theirs := status(append(bob.Env, "HADOOP_USER_NAME="+alice.Name))
	require.Nil(t, theirs.History)
	require.Equal(t, "the history record at "+hdfs.HistoryPath(alice.Name, appID)+" is private to "+alice.Name+
		" (the command line and stderr tails are theirs)", theirs.HistoryError)
}
