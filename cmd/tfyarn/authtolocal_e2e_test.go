//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/connect"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/security"
)

// TestE2EKerberosAuthToLocal: on the Kerberos cluster, whose servers and
// client configuration carry hadoop.security.auth_to_local rules mapping
// Alice.ML@EXAMPLE.COM to alice (a regex, an s/// and the /L flag, then
// DEFAULT), a job submitted as Alice.ML stages under /user/alice, runs as
// alice, and tfyarn status and kill work as Alice.ML; the ApplicationMaster
// maps the keytab's principal alike. A client whose rules map no one is one
// line, exit 2, and no application.
//
//	go test -tags e2e -run E2EKerberosAuthToLocal ./cmd/tfyarn/
func TestE2EKerberosAuthToLocal(t *testing.T) {
	c := clustertest.RequireKerberos(t)
	bin := clustertest.BuildTfyarn(t)
	m := c.Kerberos.RequireMappedUser(t, c)
	asMapped := []string{"KRB5CCNAME=FILE:" + m.CCache}

	t.Run("a job from Alice.ML's ticket is alice's", func(t *testing.T) {
		type result struct {
			stdout, stderr string
			code           int
		}
		done := make(chan result, 1)
		name := "e2e-krb-a2l-" + randomHex(t)
		go func() {
			// The task checks the user YARN runs it as.
			stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, asMapped, "run", "--worker", "1c,256m", "--name", name, "--output", "json",
				"--", "sh", "-c", `test "$USER" = alice || { echo "runs as $USER" >&2; exit 3; }; sleep 300`)
			done <- result{stdout, stderr, code}
		}()
		id := waitForRunning(t, c, bin, name)
		fs := mappedHDFS(t, c, m)
		require.Equal(t, "alice", fs.User())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		infos, err := fs.ReadDir(ctx, hdfs.BaseDir("alice"))
		require.NoError(t, err)
		owner := ""
		for _, fi := range infos {
			if fi.Name() == id {
				o, ok := fi.(interface{ Owner() string })
				require.True(t, ok, "%T has no owner", fi)
				owner = o.Owner()
			}
		}
		require.Equal(t, "alice", owner, "the owner of the job's staging directory %s", hdfs.StagingDir("alice", id))

		out, stderr, code := execTfyarn(t, c, bin, asMapped, "status", id, "--output", "json")
		require.Equal(t, exitOK, code, stderr)
		var s struct {
			User  string `json:"user"`
			State string `json:"state"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &s), out)
		require.Equal(t, "alice", s.User)
		require.Equal(t, "RUNNING", s.State)
		_, stderr, code = execTfyarn(t, c, bin, asMapped, "kill", id)
		require.Equal(t, exitOK, code, stderr)
		select {
		case res := <-done:
			require.Equal(t, exitJobFailed, res.code, "%s\n%s", res.stdout, res.stderr)
			require.Equal(t, "KILLED", runJSON(t, res.stdout).FinalStatus, "the task ran as alice, not killed by its own check")
		case <-time.After(time.Minute):
			t.Fatal("tfyarn run did not end within 1m of tfyarn kill")
		}
		requireNoKerberosStaging(t, c, id)
	})

	t.Run("a keytab job of Alice.ML's runs as alice, its AM mapping the keytab's principal", func(t *testing.T) {
		stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, []string{noTicket},
			"--principal", m.Principal, "--keytab", m.Keytab, "run", "--worker", "1c,256m", "--name", "e2e-krb-a2l-keytab", "--output", "json",
			"--", "sh", "-c", `test "$USER" = alice`)
		require.Equal(t, exitOK, code, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus, r.Diagnostics)
		out, stderr, code := execTfyarn(t, c, bin, []string{noTicket}, "--principal", m.Principal, "--keytab", m.Keytab, "status", r.AppID, "--output", "json")
		require.Equal(t, exitOK, code, stderr)
		require.Contains(t, out, `"user": "alice"`)
		requireNoKerberosStaging(t, c, r.AppID)
	})

	t.Run("rules that map no one", func(t *testing.T) {
		conf := confWith(t, c.ConfDir, "core-site.xml", map[string]string{"hadoop.security.auth_to_local": "RULE:[2:$1]"})
		name := "e2e-krb-a2l-unmapped-" + randomHex(t)
		stdout, stderr, code := execTfyarn(t, c, bin, append([]string{"HADOOP_CONF_DIR=" + conf}, asMapped...), "run", "--worker", "1c,256m", "--name", name, "--", "true")
		require.Equal(t, exitUsage, code, stderr)
		require.Empty(t, stdout)
		require.True(t, strings.HasPrefix(stderr, "tfyarn: no auth_to_local rule maps the principal "+m.Principal+
			" to a user name (hadoop.security.auth_to_local from "+conf+"/core-site.xml); add a rule for it"), stderr)
		require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		requireNoAppNamed(t, c, name)
	})
}

// mappedHDFS is HDFS as m, who the cluster's rules say is alice.
func mappedHDFS(t *testing.T, c *clustertest.Cluster, m clustertest.KerberosUser) *hdfs.FS {
	t.Helper()
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	rules, err := conf.AuthToLocal()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	login, err := security.LoginKerberos(ctx, security.KerberosOptions{CCache: m.CCache, Krb5Conf: c.Kerberos.Krb5Config, AuthToLocal: rules})
	require.NoError(t, err)
	require.Equal(t, "alice", login.User)
	fs, err := connect.HDFS(ctx, conf, login, hdfs.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { fs.Close() })
	return fs
}
