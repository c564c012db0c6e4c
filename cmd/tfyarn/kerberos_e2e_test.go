//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/connect"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// tfyarn on a Kerberized cluster, as a user uses it: `kinit` (the test
// cluster's ticket cache) or --principal/--keytab, then the same commands.
// The cluster's HDFS delegation tokens have a 20 s renew interval and a 90 s
// maximum lifetime, so renewal by the ResourceManager and refresh by the AM
// from a keytab both happen within the test.
//
//	go test -tags e2e -run E2EKerberos ./cmd/tfyarn/
func TestE2EKerberos(t *testing.T) {
	c := clustertest.RequireKerberos(t)
	bin := clustertest.BuildTfyarn(t)
	k := c.Kerberos
	require.NotNil(t, k)
	input := "/user/alice/kerberos-e2e/input.txt"
	local := filepath.Join(t.TempDir(), "input.txt")
	require.NoError(t, os.WriteFile(local, []byte("hello from kerberized hdfs\n"), 0o644))
	c.Hadoop(t, "hdfs", "dfs", "-mkdir", "-p", "/user/alice/kerberos-e2e")
	c.Hadoop(t, "hdfs", "dfs", "-put", "-f", local, input)

	t.Run("commands from the ticket cache", func(t *testing.T) {
		t.Parallel()
		testKerberosCommands(t, c, bin)
	})
	t.Run("tensorflow from the ticket cache", func(t *testing.T) {
		t.Parallel()
		testKerberosTensorFlow(t, c, bin)
	})
	t.Run("task reads and writes HDFS with its tokens past the renew interval", func(t *testing.T) {
		t.Parallel()
		testKerberosTaskTokens(t, c, bin, input)
	})
	t.Run("keytab job outlives the tokens' maximum lifetime", func(t *testing.T) {
		t.Parallel()
		testKerberosKeytabOutlivesTokens(t, c, bin, input)
	})
	t.Run("without a keytab the tokens end at their maximum lifetime", func(t *testing.T) {
		t.Parallel()
		testKerberosTokensExpireWithoutKeytab(t, c, bin, input)
	})
	t.Run("every protection level", func(t *testing.T) {
		t.Parallel()
		testKerberosProtection(t, c, bin)
	})
	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		testKerberosErrors(t, c, bin)
	})
}

// noTicket is the environment of a process that has no Kerberos ticket.
var noTicket = "KRB5CCNAME=FILE:/nonexistent/tfyarn-e2e-ccache"

func testKerberosCommands(t *testing.T, c *clustertest.Cluster, bin string) {
	for _, args := range [][]string{{"list"}, {"cluster"}, {"cache", "list"}} {
		stdout, stderr, code := execTfyarn(t, c, bin, nil, args...)
		require.Equal(t, exitOK, code, "%v: %s", args, stderr)
		require.NotEmpty(t, stdout, "%v", args)
		// The same from the keytab alone (global flags), without a ticket.
		keytab := append([]string{"--principal", c.Kerberos.Principal, "--keytab", c.Kerberos.Keytab}, args...)
		stdout, stderr, code = execTfyarn(t, c, bin, []string{noTicket}, keytab...)
		require.Equal(t, exitOK, code, "%v: %s", keytab, stderr)
		require.NotEmpty(t, stdout, "%v", keytab)
	}
	// A job to look at and kill: status and kill work with the ticket too.
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--worker", "1c,256m", "--name", "e2e-krb-kill", "--output", "json", "--", "sh", "-c", "exit 0")
	require.Equal(t, exitOK, code, stderr)
	r := runJSON(t, stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	out, stderr, code := execTfyarn(t, c, bin, nil, "status", r.AppID, "--output", "json")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, out, `"user": "alice"`)
	require.Contains(t, out, `"final_status": "SUCCEEDED"`)
	// status and kill from the keytab alone too (README: every command works with either).
	fromKeytab := []string{"--principal", c.Kerberos.Principal, "--keytab", c.Kerberos.Keytab}
	out, stderr, code = execTfyarn(t, c, bin, []string{noTicket}, append(fromKeytab, "status", r.AppID, "--output", "json")...)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, out, `"final_status": "SUCCEEDED"`)
	out, stderr, code = execTfyarn(t, c, bin, []string{noTicket}, append(fromKeytab, "kill", r.AppID)...)
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, r.AppID+" already ended FINISHED/SUCCEEDED; nothing to kill\n", out)

	type result struct {
		stdout string
		code   int
	}
	done := make(chan result, 1)
	name := "e2e-krb-sleep-" + randomHex(t)
	go func() {
		stdout, _, code := execTfyarn(t, c, bin, nil, "run", "--worker", "1c,256m", "--name", name, "--output", "json", "--", "sleep", "300")
		done <- result{stdout, code}
	}()
	id := waitForRunning(t, c, bin, name)
	_, stderr, code = execTfyarn(t, c, bin, nil, "kill", id)
	require.Equal(t, exitOK, code, stderr)
	select {
	case res := <-done:
		require.Equal(t, exitJobFailed, res.code, res.stdout)
		require.Equal(t, "KILLED", runJSON(t, res.stdout).FinalStatus)
	case <-time.After(time.Minute):
		t.Fatal("tfyarn run did not end within 1m of tfyarn kill")
	}
	requireNoKerberosStaging(t, c, id)
	requireNoContainerProcess(t, id)
}

func testKerberosTensorFlow(t *testing.T, c *clustertest.Cluster, bin string) {
	python := tfPython(t, c)
	r, _, code := execTF(t, c, bin, "--name", "e2e-krb-mwms", "--chief", "1c,1g", "--worker", "1c,1g",
		"--python", python, filepath.Join(c.Root, "examples", "mwms_keras.py"), "--", "--epochs", "1", "--steps-per-epoch", "3")
	require.Equal(t, exitOK, code, r.Diagnostics)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	require.True(t, strings.HasPrefix(r.Diagnostics, "chief:0 succeeded"), r.Diagnostics)
	requireNoKerberosStaging(t, c, r.AppID)
}

// taskHDFSScript reads input with Hadoop's own client and nothing but the
// delegation tokens in HADOOP_TOKEN_FILE_LOCATION (no ticket), again pause
// seconds after the task started, then writes out: exit 0 only if every step
// worked. With held > 0 it also waits for the AM to hand out tokens of its
// own (the token file changes: a --keytab job's AM refreshes them), keeps
// that file as a process that started then would (Hadoop's clients read it
// once), and reads with it held seconds later.
func taskHDFSScript(c *clustertest.Cluster, input, out string, pause, held int) string {
	h := filepath.Join(c.Root, "testcluster", "hadoop.sh")
	return fmt.Sprintf(`set -u
start=$(date +%%s)
[ -n "${HADOOP_TOKEN_FILE_LOCATION:-}" ] || { echo "no token file" >&2; exit 10; }
[ ! -e tfyarn.keytab ] || { echo "a task container got the keytab" >&2; exit 16; }
cp "$HADOOP_TOKEN_FILE_LOCATION" first.tokens
want='hello from kerberized hdfs'
got=$(%[1]s hdfs dfs -cat %[2]s) || { echo "first read failed" >&2; exit 11; }
[ "$got" = "$want" ] || { echo "first read: $got" >&2; exit 12; }
if [ %[5]d -gt 0 ]; then
  n=0
  while cmp -s "$HADOOP_TOKEN_FILE_LOCATION" first.tokens; do
    n=$((n+1)); [ $n -le 300 ] || { echo "the token file never changed" >&2; exit 17; }
    sleep 0.1
  done
  cp "$HADOOP_TOKEN_FILE_LOCATION" held.tokens
  sleep %[5]d
  got=$(HADOOP_TOKEN_FILE_LOCATION=$PWD/held.tokens %[1]s hdfs dfs -cat %[2]s) || { echo "read with the tokens held for %[5]ds failed" >&2; exit 18; }
fi
# Past the pause since the task started, however long the reads above took.
left=$((start + %[4]d - $(date +%%s)))
[ $left -le 0 ] || sleep $left
got=$(%[1]s hdfs dfs -cat %[2]s) || { echo "read after %[4]ds failed" >&2; exit 13; }
[ "$got" = "$want" ] || { echo "second read: $got" >&2; exit 14; }
echo "written by $TFYARN_TASK" | %[1]s hdfs dfs -put -f - %[3]s || { echo "write failed" >&2; exit 15; }
`, h, input, out, pause, held)
}

func taskEnv(c *clustertest.Cluster) []string {
	return []string{"--setenv", "HADOOP_CONF_DIR=" + c.ConfDir, "--setenv", "KRB5_CONFIG=" + c.Kerberos.Krb5Config,
		"--setenv", "TC_DIR=" + c.Dir, "--setenv", noTicket}
}

func testKerberosTaskTokens(t *testing.T, c *clustertest.Cluster, bin, input string) {
	out := "/user/alice/kerberos-e2e/written-by-ticket-job"
	pause := int(c.Kerberos.TokenRenew/time.Second) + 8 // past the renew interval: the RM renewed them
	args := append([]string{"run", "--worker", "1c,1g", "--name", "e2e-krb-tokens", "--output", "json"}, taskEnv(c)...)
	args = append(args, "--", "sh", "-c", taskHDFSScript(c, input, out, pause, 0))
	stdout, stderr, code := execTfyarnFor(t, c, bin, 4*time.Minute, nil, args...)
	r := runJSON(t, stdout)
	require.Equal(t, exitOK, code, "%s\n%s", r.Diagnostics, stderr)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	require.Equal(t, "written by worker:0", strings.TrimSpace(c.Hadoop(t, "hdfs", "dfs", "-cat", out)))
	// The AM, which has no ticket, removed the staging directory with the tokens.
	am := localContainerLog(t, c, r.AppID, "am.stderr")
	require.Contains(t, am, "job SUCCEEDED")
	require.NotContains(t, am, "removing the staging directory")
	requireNoKerberosStaging(t, c, r.AppID)
}

func testKerberosKeytabOutlivesTokens(t *testing.T, c *clustertest.Cluster, bin, input string) {
	k := c.Kerberos
	out := "/user/alice/kerberos-e2e/written-by-keytab-job"
	pause := int(k.TokenMaxLifetime/time.Second) + 10 // past the maximum lifetime of every token the client got
	// The job keeps checkpoints (--checkpoint): at its end, past the maximum lifetime of the
	// tokens its launcher started with, the launcher saves the program's model with the AM's fresh
	// ones.
	checkpointsCLI(t, c, bin, "e2e-krb-long-job", "--delete") // an earlier run's
	args := append([]string{"run", "--principal", k.Principal, "--keytab", k.Keytab,
		"--worker", "1c,1g", "--name", "e2e-krb-long-job", "--checkpoint", "--output", "json"}, taskEnv(c)...)
	// A process that read the AM's tokens keeps HDFS past their renew interval: the AM renews them.
	held := int(k.TokenRenew/time.Second) + 8
	args = append(args, "--", "sh", "-c", taskHDFSScript(c, input, out, pause, held)+`date +%s > "$TFYARN_CHECKPOINT_DIR/model"`+"\n")
	// The client itself has no ticket either: the keytab is all it has.
	type result struct {
		stdout, stderr string
		code           int
	}
	done := make(chan result, 1)
	go func() {
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, []string{noTicket}, args...)
		done <- result{stdout, stderr, code}
	}()
	// While it runs, the keytab is in no file in the clear: in HDFS it is
	// sealed, in the staging directory only, readable by alice only (the
	// key is in the AM's credentials); on the nodes the AM took the key out
	// of its container's token file, deleted its copy of the sealed keytab
	// once read, and no task container ever got either.
	id := waitForRunning(t, c, bin, "e2e-krb-long-job")
	ls := c.Hadoop(t, "hdfs", "dfs", "-ls", hdfs.StagingDir("alice", id))
	require.Regexp(t, `(?m)^-rw------- .* alice .*/`+regexp.QuoteMeta(id)+`/keytab\.sealed$`, ls)
	require.Equal(t, 1, strings.Count(ls, "keytab"), ls)
	base := c.Hadoop(t, "hdfs", "dfs", "-ls", hdfs.BaseDir("alice"))
	require.Regexp(t, `(?m)^drwx------ .* alice .*/`+regexp.QuoteMeta(id)+`$`, base)
	keytabBytes, err := os.ReadFile(k.Keytab)
	require.NoError(t, err)
	requireNoKeytabOnNodes(t, c, id, keytabBytes)
	res := <-done
	stdout, stderr, code := res.stdout, res.stderr, res.code
	r := runJSON(t, stdout)
	require.Equal(t, exitOK, code, "%s\n%s", r.Diagnostics, stderr)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	require.Equal(t, "written by worker:0", strings.TrimSpace(c.Hadoop(t, "hdfs", "dfs", "-cat", out)))

	am := localContainerLog(t, c, r.AppID, "am.stderr")
	refreshes := regexp.MustCompile(`obtained 1 fresh HDFS delegation token\(s\) from the keytab of alice@EXAMPLE.COM`).FindAllString(am, -1)
	// One at the start, then one every 75% of the 20 s renew interval.
	require.GreaterOrEqual(t, len(refreshes), 5, am)
	taskLog := localContainerLog(t, c, r.AppID, "stderr")
	require.Contains(t, taskLog, "tfyarn task worker:0")
	require.Contains(t, taskLog, "checkpoints: connected to HDFS anew with the AM's fresh delegation tokens")
	var listed struct {
		Checkpoints []struct{ Task, App string } `json:"checkpoints"`
	}
	require.NoError(t, json.Unmarshal([]byte(checkpointsCLI(t, c, bin, "e2e-krb-long-job", "--output", "json")), &listed))
	require.Len(t, listed.Checkpoints, 1, "the model saved past the first tokens' lifetime")
	require.Equal(t, r.AppID, listed.Checkpoints[0].App)
	for _, log := range []string{am, taskLog, stderr} {
		requireNoSecret(t, log, k.Keytab)
	}
	requireNoKerberosStaging(t, c, r.AppID)
	// The sealed keytab went with the staging directory; the keytab never
	// went to the shared cache.
	listing := c.Hadoop(t, "hdfs", "dfs", "-ls", "-R", "/user/alice/.tfyarn")
	require.NotRegexp(t, `(?m)(keytab\.sealed|\.keytab)$`, listing, "no file of a keytab's name")
}

// The control for the keytab test: the same task from a ticket cache loses
// HDFS once the tokens' maximum lifetime has passed, so the keytab test
// proves the AM's refresh, not a lenient NameNode.
func testKerberosTokensExpireWithoutKeytab(t *testing.T, c *clustertest.Cluster, bin, input string) {
	pause := int(c.Kerberos.TokenMaxLifetime/time.Second) + 10
	args := append([]string{"run", "--worker", "1c,1g", "--name", "e2e-krb-expire", "--output", "json"}, taskEnv(c)...)
	args = append(args, "--", "sh", "-c", taskHDFSScript(c, input, "/user/alice/kerberos-e2e/never-written", pause, 0))
	stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, nil, args...)
	r := runJSON(t, stdout)
	require.Equal(t, exitJobFailed, code, stderr)
	require.Equal(t, "FAILED", r.FinalStatus)
	require.Contains(t, r.Diagnostics, fmt.Sprintf("read after %ds failed", pause), r.Diagnostics)
}

func testKerberosProtection(t *testing.T, c *clustertest.Cluster, bin string) {
	for _, level := range []string{"authentication", "integrity", "privacy"} {
		conf := confWith(t, c.ConfDir, "core-site.xml", map[string]string{"hadoop.rpc.protection": level})
		_, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_CONF_DIR=" + conf}, "list")
		require.Equal(t, exitOK, code, "%s: %s", level, stderr)
		stdout, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_CONF_DIR=" + conf},
			"run", "--worker", "1c,256m", "--name", "e2e-krb-"+level, "--output", "json", "--", "true")
		require.Equal(t, exitOK, code, "%s: %s", level, stderr)
		require.Equal(t, "SUCCEEDED", runJSON(t, stdout).FinalStatus, level)
	}
}

func testKerberosErrors(t *testing.T, c *clustertest.Cluster, bin string) {
	k := c.Kerberos
	deadKDC := krb5ConfWithKDC(t, k.Krb5Config, "127.0.0.1:"+strconv.Itoa(freePort(t)))
	simpleConf := confWith(t, c.ConfDir, "core-site.xml", map[string]string{"hadoop.security.authentication": "simple"})
	wrongRM := confWith(t, c.ConfDir, "yarn-site.xml", map[string]string{"yarn.resourcemanager.principal": "yarn/_HOST@EXAMPLE.COM"})
	plain := clustertest.Require(t)
	kerberosOnPlain := confWith(t, plain.ConfDir, "core-site.xml", map[string]string{"hadoop.security.authentication": "kerberos"})
	kerberosOnPlain = confWith(t, kerberosOnPlain, "yarn-site.xml", map[string]string{"yarn.resourcemanager.principal": "root/_HOST@EXAMPLE.COM"})
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"no ticket", []string{noTicket}, nil, "tfyarn: no Kerberos ticket for "},
		{"expired ticket", []string{"KRB5CCNAME=FILE:" + k.ExpiredCCache}, nil, "tfyarn: the Kerberos ticket for alice@EXAMPLE.COM expired at "},
		{"keytab without the principal", nil, []string{"--principal", "bob@EXAMPLE.COM", "--keytab", k.Keytab}, "tfyarn: keytab " + k.Keytab + " has no key for bob@EXAMPLE.COM"},
		{"KDC does not answer", []string{"KRB5_CONFIG=" + deadKDC}, []string{"--principal", k.Principal, "--keytab", k.Keytab}, "tfyarn: cannot reach the KDC for realm EXAMPLE.COM"},
		{"server principal does not match", []string{"HADOOP_CONF_DIR=" + wrongRM}, nil, "tfyarn: the server authenticates as " + k.ServicePrincipal + ", but the configuration"},
		{"configuration says simple", []string{"HADOOP_CONF_DIR=" + simpleConf}, nil, "tfyarn: the cluster requires Kerberos, but the configuration"},
		{"a further filesystem that does not answer", nil, []string{"--file-systems", "hdfs://127.0.0.1:" + strconv.Itoa(freePort(t))}, "tfyarn: hdfs: cannot get a delegation token from hdfs://127.0.0.1:"},
		{"configuration says kerberos to a plain cluster", []string{"HADOOP_CONF_DIR=" + kerberosOnPlain}, nil, "tfyarn: the configuration (HADOOP_CONF_DIR=" + kerberosOnPlain + ") says hadoop.security.authentication=kerberos, but the cluster does not use Kerberos"},
	} {
		name := "e2e-krb-err-" + strings.ReplaceAll(tc.name, " ", "-")
		args := append(append([]string{"run"}, tc.args...), "--worker", "1c,256m", "--name", name, "--", "true")
		stdout, stderr, code := execTfyarn(t, c, bin, tc.env, args...)
		require.Equal(t, exitUsage, code, "%s: %s", tc.name, stderr)
		require.Empty(t, stdout, tc.name)
		require.True(t, strings.HasPrefix(stderr, tc.want), "%s: %q", tc.name, stderr)
		require.Equal(t, 1, strings.Count(stderr, "\n"), "%s: one line: %q", tc.name, stderr)
		requireNoSecret(t, stderr, k.Keytab)
		requireNoAppNamed(t, c, name)
	}
}

// waitForRunning waits for alice's application name to be RUNNING and
// returns its id.
func waitForRunning(t *testing.T, c *clustertest.Cluster, bin, name string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		out, stderr, code := execTfyarn(t, c, bin, nil, "list", "--state", "RUNNING", "--output", "json")
		require.Equal(t, exitOK, code, stderr)
		var l struct {
			Applications []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"applications"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &l), out)
		for _, a := range l.Applications {
			if a.Name == name {
				return a.ID
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("no RUNNING application %s within 1m", name)
	return ""
}

// kerberosLogin is alice's login from the test cluster's keytab.
func kerberosLogin(t *testing.T, c *clustertest.Cluster) (*hadoopconf.Config, *security.KerberosLogin) {
	t.Helper()
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	login, err := security.LoginKerberos(ctx, security.KerberosOptions{
		Principal: c.Kerberos.Principal, Keytab: c.Kerberos.Keytab, Krb5Conf: c.Kerberos.Krb5Config,
	})
	require.NoError(t, err)
	return conf, login
}

func requireNoAppNamed(t *testing.T, c *clustertest.Cluster, name string) {
	t.Helper()
	conf, login := kerberosLogin(t, c)
	rm, err := connect.RM(conf, login, yarn.ClientOptions{})
	require.NoError(t, err)
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	apps, err := rm.GetApplications(ctx, yarn.ApplicationFilter{Users: []string{"alice"}})
	require.NoError(t, err)
	for _, a := range apps {
		require.NotEqual(t, name, a.GetName(), "application %s was created", yarn.FormatApplicationID(a.GetApplicationId()))
	}
}

// requireNoKerberosStaging: the application's staging directory (which held the
// job file and, for keytab jobs, the keytab) is gone.
func requireNoKerberosStaging(t *testing.T, c *clustertest.Cluster, appID string) {
	t.Helper()
	conf, login := kerberosLogin(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fs, err := connect.HDFS(ctx, conf, login, hdfs.Options{})
	require.NoError(t, err)
	defer fs.Close()
	dir := hdfs.StagingDir("alice", appID)
	// The client removes it after the final status too: allow it a moment.
	deadline := time.Now().Add(10 * time.Second)
	for {
		exists, err := fs.Exists(ctx, dir)
		require.NoError(t, err)
		if !exists {
			return
		}
		require.True(t, time.Now().Before(deadline), "%s still exists", dir)
		time.Sleep(200 * time.Millisecond)
	}
}

// requireNoSecret: no keytab bytes and no token password material in text.
func requireNoSecret(t *testing.T, text, keytab string) {
	t.Helper()
	kt, err := os.ReadFile(keytab)
	require.NoError(t, err)
	require.NotContains(t, text, string(kt[len(kt)-16:]))
	require.NotRegexp(t, `(?i)password=|"password"`, text)
}

// localContainerLog is a container log file of appID from the NodeManagers'
// local log directories (log aggregation is off under Kerberos), all
// containers' copies concatenated.
func localContainerLog(t *testing.T, c *clustertest.Cluster, appID, file string) string {
	t.Helper()
	// MiniYARNCluster's NodeManagers keep logs below data/yarn, NodeManager processes of their
	// own (TC_NM_HOSTS=1) below data/nm-I/logs.
	matches, err := filepath.Glob(filepath.Join(c.Dir, "data", "yarn", "*", "*", "*logDir*", appID, "container_*", file))
	require.NoError(t, err)
	own, err := filepath.Glob(filepath.Join(c.Dir, "data", "nm-*", "logs", appID, "container_*", file))
	require.NoError(t, err)
	matches = append(matches, own...)
	require.NotEmpty(t, matches, "no %s of %s", file, appID)
	var b strings.Builder
	for _, m := range matches {
		data, err := os.ReadFile(m)
		require.NoError(t, err)
		b.Write(data)
	}
	return b.String()
}

// containerLog returns one log file of one container of appID, from the
// NodeManager's local disk (log aggregation is off under Kerberos).
func containerLog(t *testing.T, c *clustertest.Cluster, appID, containerID, file string) string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(c.Dir, "data", "yarn", "*", "*", "*logDir*", appID, containerID, file))
	require.NoError(t, err)
	own, err := filepath.Glob(filepath.Join(c.Dir, "data", "nm-*", "logs", appID, containerID, file))
	require.NoError(t, err)
	matches = append(matches, own...)
	require.Len(t, matches, 1, "%s of %s", file, containerID)
	data, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	return string(data)
}

// requireNoKeytabOnNodes waits until the AM's and a task's container
// directories of appID both hold their token file (the task has started),
// then requires that no file in any NodeManager's user directories (what a
// container of the user can read: the containers' work directories and the
// localized resources) holds the keytab's bytes. The NodeManagers' private
// directories (nmPrivate) are the NodeManager's own and are not looked at.
func requireNoKeytabOnNodes(t *testing.T, c *clustertest.Cluster, appID string, keytab []byte) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		var tokenFiles, holders []string
		// Every NodeManager's directories: data/yarn (MiniYARNCluster) or data/nm-I (TC_NM_HOSTS=1).
		err := filepath.WalkDir(filepath.Join(c.Dir, "data"), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return nil // containers come and go while we walk
			}
			if d.IsDir() && d.Name() == "nmPrivate" {
				return filepath.SkipDir
			}
			if !d.Type().IsRegular() || !strings.Contains(p, string(filepath.Separator)+"usercache"+string(filepath.Separator)) {
				return nil
			}
			if d.Name() == "container_tokens" && strings.Contains(p, appID) {
				tokenFiles = append(tokenFiles, p)
			}
			if d.Name() == contract.SealedKeytabName {
				holders = append(holders, p) // the AM deletes its copy once read
			}
			data, err := os.ReadFile(p)
			if err == nil && bytes.Contains(data, keytab) {
				holders = append(holders, p)
			}
			return nil
		})
		require.NoError(t, err)
		require.Empty(t, holders, "files on the nodes that hold the keytab")
		if len(tokenFiles) >= 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the AM's and a task's token files of %s did not both appear within 90s (have %v)", appID, tokenFiles)
		}
		time.Sleep(time.Second)
	}
}

// confWith copies a configuration directory, setting props in one of its files.
func confWith(t *testing.T, from, file string, props map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(from)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		require.NoError(t, err)
		if e.Name() == file {
			s := string(data)
			for k, v := range props {
				re := regexp.MustCompile(`<name>` + regexp.QuoteMeta(k) + `</name>\s*<value>[^<]*</value>`)
				prop := "<name>" + k + "</name><value>" + v + "</value>"
				if re.MatchString(s) {
					s = re.ReplaceAllLiteralString(s, prop)
				} else {
					s = strings.Replace(s, "</configuration>", "<property>"+prop+"</property>\n</configuration>", 1)
				}
			}
			data = []byte(s)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644))
	}
	return dir
}

// krb5ConfWithKDC is a copy of krb5.conf whose KDC is kdc.
func krb5ConfWithKDC(t *testing.T, from, kdc string) string {
	t.Helper()
	data, err := os.ReadFile(from)
	require.NoError(t, err)
	s := regexp.MustCompile(`(?m)^(\s*)kdc\s*=\s*\S+`).ReplaceAllString(string(data), "${1}kdc = "+kdc)
	p := filepath.Join(t.TempDir(), "krb5.conf")
	require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	return p
}
