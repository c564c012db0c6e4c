//go:build e2e

package hdfs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
)

// kerberosConf is a fresh copy of the Kerberos cluster's client
// configuration, which a subtest may change with Set.
func kerberosConf(t *testing.T, c *clustertest.Cluster) *hadoopconf.Config {
	t.Helper()
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	require.True(t, conf.SecurityEnabled())
	return conf
}

// connectKerberos connects to conf's filesystem with a Kerberos login; the
// FS is closed at cleanup.
func connectKerberos(t *testing.T, conf *hadoopconf.Config, login *security.KerberosLogin) *FS {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// User is replaced by the principal's short name.
	fs, err := ConnectOptions(ctx, conf, Options{User: "someone-else", Kerberos: login})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, fs.Close()) })
	return fs
}

// connectTokens connects to conf's filesystem with delegation tokens only.
func connectTokens(t *testing.T, conf *hadoopconf.Config, toks ...security.Token) *FS {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fs, err := ConnectOptions(ctx, conf, Options{User: "alice", Tokens: toks})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, fs.Close()) })
	return fs
}

func e2eAppID() string { return fmt.Sprintf("application_%d_0001", time.Now().UnixNano()) }

// TestE2EKerberosHDFS runs package hdfs against the Kerberized test cluster:
// ticket-cache and keytab logins (GSSAPI to the NameNode, SASL data
// transfer to the DataNode), delegation tokens (issue, renew, use alone,
// HA service names, real expiry) and a wrong NameNode principal.
func TestE2EKerberosHDFS(t *testing.T) {
	c := clustertest.RequireKerberos(t)
	k := c.Kerberos
	require.NotNil(t, k)
	ctx := context.Background()

	keytabLogin, err := security.LoginKerberos(ctx, security.KerberosOptions{
		Principal: k.Principal, Keytab: k.Keytab, Krb5Conf: k.Krb5Config,
	})
	require.NoError(t, err)
	require.Equal(t, k.Principal, keytabLogin.Principal)

	t.Run("ticket cache login writes through the DataNode", func(t *testing.T) {
		t.Parallel()
		login, err := security.LoginKerberos(ctx, security.KerberosOptions{CCache: k.CCache, Krb5Conf: k.Krb5Config})
		require.NoError(t, err)
		require.Equal(t, k.Principal, login.Principal)
		fs := connectKerberos(t, kerberosConf(t, c), login)
		require.Equal(t, "alice", fs.User())

		appID := e2eAppID()
		dir, err := fs.CreateStaging(ctx, appID)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, fs.RemoveStaging(context.Background(), appID)) })
		require.Equal(t, StagingDir("alice", appID), dir)

		data := []byte("written by tfyarn over SASL data transfer " + time.Now().String())
		r, err := fs.UploadBytes(ctx, data, path.Join(dir, "hello.txt"))
		require.NoError(t, err)
		require.EqualValues(t, len(data), r.Size)
		require.EqualValues(t, 28020, r.Port)
		// Hadoop's own client (Kerberos from the ticket cache) reads the
		// bytes back from the DataNode.
		require.Equal(t, string(data), c.Hadoop(t, "hdfs", "dfs", "-cat", r.Path))
		require.Equal(t, fmt.Sprintf("%d %d", r.Size, r.Timestamp), hadoopStat(t, c, r.Path))
	})

	t.Run("keytab login gets and renews a delegation token", func(t *testing.T) {
		t.Parallel()
		fs := connectKerberos(t, kerberosConf(t, c), keytabLogin)
		require.Equal(t, "alice", fs.User())
		ok, err := fs.Exists(ctx, "/user/alice")
		require.NoError(t, err)
		require.True(t, ok)

		tok, err := fs.DelegationToken(ctx, k.Principal)
		require.NoError(t, err)
		require.Equal(t, security.KindHDFSDelegation, tok.Kind)
		require.Equal(t, "HDFS_DELEGATION_TOKEN", tok.Kind)
		require.Equal(t, "127.0.0.1:28020", tok.Service)
		require.NotEmpty(t, tok.Identifier)
		require.NotEmpty(t, tok.Password)

		exp, err := fs.RenewDelegationToken(ctx, tok)
		require.NoError(t, err)
		left := time.Until(exp)
		t.Logf("renewed until %s (in %s; renew interval %s)", exp.Format(time.RFC3339Nano), left, k.TokenRenew)
		require.GreaterOrEqual(t, left, 10*time.Second)
		require.LessOrEqual(t, left, 30*time.Second)
	})

	t.Run("token only", func(t *testing.T) {
		t.Parallel()
		conf := kerberosConf(t, c)
		kfs := connectKerberos(t, conf, keytabLogin)
		appID := e2eAppID()
		dir, err := kfs.CreateStaging(ctx, appID)
		require.NoError(t, err)
		t.Cleanup(func() { kfs.bestEffortRemove(dir) })
		_, err = kfs.UploadBytes(ctx, []byte("secret job"), path.Join(dir, "job.json"))
		require.NoError(t, err)
		tok, err := kfs.DelegationToken(ctx, k.Principal)
		require.NoError(t, err)

		// A token of another kind or service is ignored: no usable token.
		other := tok
		other.Service = "127.0.0.1:1"
		_, err = ConnectOptions(ctx, conf, Options{User: "alice", Tokens: []security.Token{other}})
		require.ErrorContains(t, err, "delegation token")

		fs := connectTokens(t, conf, other, tok)
		require.Equal(t, "alice", fs.User())
		require.NoError(t, fs.RemoveStaging(ctx, appID))
		ok, err := kfs.Exists(ctx, dir)
		require.NoError(t, err)
		require.False(t, ok, "the token-only FS removed %s", dir)
		require.NoError(t, fs.RemoveStaging(ctx, appID), "a missing staging dir is fine")

		// The token alone also reads and writes files: colinmarc's NameNode
		// connections authenticate with it (ipc.ForeignClientConn, under
		// the cluster's hadoop.rpc.protection=privacy), its DataNode ones
		// with the NameNode's block tokens.
		appID2 := e2eAppID()
		dir2, err := fs.CreateStaging(ctx, appID2)
		require.NoError(t, err)
		t.Cleanup(func() { kfs.bestEffortRemove(dir2) })
		p := path.Join(dir2, "tokenonly.txt")
		_, err = fs.UploadBytes(ctx, []byte("written with a token"), p)
		require.NoError(t, err)
		ok, err = fs.Exists(ctx, p)
		require.NoError(t, err)
		require.True(t, ok)
		got, err := kfs.readSmall(ctx, p, 1<<10)
		require.NoError(t, err)
		require.Equal(t, "written with a token", string(got), "the Kerberos login reads what the token wrote")
		got, err = fs.readSmall(ctx, p, 1<<10)
		require.NoError(t, err)
		require.Equal(t, "written with a token", string(got))
		require.NoError(t, fs.RemoveStaging(ctx, appID2))

		_, err = ConnectOptions(ctx, conf, Options{User: "alice"})
		require.Error(t, err)
		require.ErrorContains(t, err, "delegation token")
		t.Logf("no token: %v", err)
	})

	t.Run("HA nameservice token", func(t *testing.T) {
		t.Parallel()
		_, closedPort, err := net.SplitHostPort(closedAddr(t))
		require.NoError(t, err)
		conf := kerberosConf(t, c)
		conf.Set("dfs.nameservices", "tfyarnha")
		conf.Set("dfs.ha.namenodes.tfyarnha", "nn1,nn2")
		conf.Set("dfs.namenode.rpc-address.tfyarnha.nn1", "localhost:"+closedPort)
		conf.Set("dfs.namenode.rpc-address.tfyarnha.nn2", "localhost:28020")

		start := time.Now()
		toks, exp, err := FetchDelegationTokens(ctx, conf, keytabLogin, k.Principal, []string{"hdfs://tfyarnha"}, true)
		require.NoError(t, err)
		t.Logf("fetched through failover in %s", time.Since(start))
		require.Len(t, toks, 1)
		require.Equal(t, "ha-hdfs:tfyarnha", toks[0].Service)
		require.Equal(t, security.KindHDFSDelegation, toks[0].Kind)
		require.False(t, exp.IsZero())
		require.WithinDuration(t, time.Now().Add(k.TokenRenew), exp, 10*time.Second)

		// The Kerberos FS on the cluster's own URI makes a directory; a
		// token-only FS on hdfs://tfyarnha removes it: the NameNode took a
		// token whose service is ha-hdfs:tfyarnha, which only matches when
		// the client picks tokens by the nameservice.
		kfs := connectKerberos(t, kerberosConf(t, c), keytabLogin)
		dir := path.Join(BaseDir("alice"), fmt.Sprintf("hatest-%d", time.Now().UnixNano()))
		require.NoError(t, kfs.mkdirAll(ctx, dir, 0o755))
		t.Cleanup(func() { kfs.bestEffortRemove(dir) })

		conf.Set("fs.defaultFS", "hdfs://tfyarnha")
		fs := connectTokens(t, conf, toks...)
		require.Equal(t, "hdfs://tfyarnha", fs.Target().URI)
		require.NoError(t, fs.RemoveAll(ctx, dir))
		ok, err := kfs.Exists(ctx, dir)
		require.NoError(t, err)
		require.False(t, ok)

		// The ip:port token of the same NameNode does not serve the nameservice.
		ipTok, err := kfs.DelegationToken(ctx, k.Principal)
		require.NoError(t, err)
		_, err = ConnectOptions(ctx, conf, Options{User: "alice", Tokens: []security.Token{ipTok}})
		require.ErrorContains(t, err, "delegation token")
	})

	t.Run("an unrenewed token expires", func(t *testing.T) {
		t.Parallel()
		conf := kerberosConf(t, c)
		kfs := connectKerberos(t, conf, keytabLogin)
		issued := time.Now()
		tok, err := kfs.DelegationToken(ctx, k.Principal)
		require.NoError(t, err)
		missing := path.Join(BaseDir("alice"), fmt.Sprintf("expirytest-%d", time.Now().UnixNano()))

		// Valid at first (on a connection of its own, closed again: the
		// NameNode checks a token when a connection authenticates).
		fresh, err := ConnectOptions(ctx, conf, Options{User: "alice", Tokens: []security.Token{tok}})
		require.NoError(t, err)
		require.NoError(t, fresh.RemoveAll(ctx, missing))
		require.NoError(t, fresh.Close())

		time.Sleep(time.Until(issued.Add(k.TokenRenew + 2*time.Second)))

		fs, err := ConnectOptions(ctx, conf, Options{User: "alice", Tokens: []security.Token{tok}})
		if err == nil {
			defer fs.Close()
			err = fs.RemoveAll(ctx, missing)
		}
		require.Error(t, err, "a token %s past its renew interval must be refused", time.Since(issued))
		t.Logf("expired token: %v", err)
		require.ErrorContains(t, err, "cannot authenticate with the HDFS delegation token to hdfs://", "one line that says it is the token")
		msg := strings.ToLower(err.Error())
		require.True(t, strings.Contains(msg, "expir") || strings.Contains(msg, "authenticat") ||
			strings.Contains(msg, "invalidtoken"), "%v", err)
	})

	t.Run("wrong NameNode principal", func(t *testing.T) {
		t.Parallel()
		conf := kerberosConf(t, c)
		conf.Set("dfs.namenode.kerberos.principal", "nn/_HOST@EXAMPLE.COM")
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		fs, err := ConnectOptions(cctx, conf, Options{User: "alice", Kerberos: keytabLogin})
		if err == nil {
			fs.Close()
		}
		require.Error(t, err)
		t.Logf("wrong principal: %v", err)
		var pm *ipc.PrincipalMismatchError
		require.True(t, errors.As(err, &pm), "errors.As *ipc.PrincipalMismatchError through %T: %v", err, err)
		require.Equal(t, "nn/localhost@EXAMPLE.COM", pm.Configured)
		require.Equal(t, k.ServicePrincipal, pm.Offered)
		require.ErrorContains(t, err, "does not match")
	})
}
