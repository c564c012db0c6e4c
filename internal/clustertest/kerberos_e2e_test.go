//go:build e2e

package clustertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/stretchr/testify/require"
)

// TestKerberosCluster: the third cluster comes up with a KDC in its JVM; Hadoop's own CLI lists
// HDFS with nothing but the test user's ticket cache; gokrb5 reads krb5.conf and that cache and
// gets a ticket for the service principal; the expired cache really holds an expired TGT; the
// second user bob has his own home directory, ticket cache and keytab; every NodeManager has a
// host and a service principal of its own.
func TestKerberosCluster(t *testing.T) {
	c := RequireKerberos(t)
	require.Equal(t, "kerberos", c.Profile)
	require.Equal(t, "localhost:28032", c.Facts["rm"])
	k := c.Kerberos
	require.NotNil(t, k)
	require.Equal(t, "EXAMPLE.COM", k.Realm)
	require.Equal(t, "alice@EXAMPLE.COM", k.Principal)
	require.Equal(t, "localhost:28090", k.KDC)
	require.True(t, strings.HasSuffix(k.ServicePrincipal, "/localhost@EXAMPLE.COM"), k.ServicePrincipal)
	require.Equal(t, 20*time.Second, k.TokenRenew)
	require.Equal(t, 90*time.Second, k.TokenMaxLifetime)
	require.Equal(t, "bob@EXAMPLE.COM", k.Bob.Principal)
	for _, f := range []string{k.Keytab, k.CCache, k.ExpiredCCache, k.PasswordFile, filepath.Join(c.Dir, "service.keytab"),
		k.Bob.Keytab, k.Bob.CCache, k.Bob.PasswordFile, k.Admin.CCache} {
		st, err := os.Stat(f)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f)
	}

	core, err := os.ReadFile(filepath.Join(c.ConfDir, "core-site.xml"))
	require.NoError(t, err)
	require.Contains(t, string(core), "<name>hadoop.security.authentication</name><value>kerberos</value>")
	require.Contains(t, string(core), "<name>hadoop.rpc.protection</name><value>privacy</value>")

	// Hadoop's own client, authenticated only by the ticket cache (c.Env sets KRB5CCNAME).
	out := c.Hadoop(t, "hdfs", "dfs", "-ls", "/user")
	require.Contains(t, out, "/user/alice", out)
	require.Regexp(t, `drwxr-xr-x +- bob +\S+ +0 .* /user/bob\n`, out)
	nodes := c.Hadoop(t, "yarn", "node", "-list", "-showDetails")
	n, err := strconv.Atoi(c.Facts["nodemanagers"])
	require.NoError(t, err)
	require.Equal(t, n, strings.Count(nodes, "RUNNING"), nodes)
	require.Contains(t, nodes, "Node-Labels : gpu")

	// The production shape: every NodeManager a process on a host of its own, running containers
	// as their users, with a service principal of its host in a keytab of its own (the NodeManager
	// is RUNNING, so it logged in with it: the ResourceManager takes Kerberos connections only).
	require.Equal(t, "3", c.Facts["nodemanagers"])
	require.Equal(t, "true", c.Facts["nodemanager-hosts"])
	require.Equal(t, "linux", c.Facts["executor"])
	user := strings.TrimSuffix(k.ServicePrincipal, "/localhost@EXAMPLE.COM")
	require.ElementsMatch(t, []string{k.ServicePrincipal, "HTTP/localhost@EXAMPLE.COM"}, keytabPrincipals(t, k.Admin.Keytab),
		"the service keytab holds the service principals alone (no krbtgt)")
	for i := 0; i < n; i++ {
		host := strings.Split(c.Facts[fmt.Sprintf("nm%d", i)], ":")[0]
		require.Equal(t, fmt.Sprintf("nm%d.tfyarn.test", i), host, "NodeManager %d's host (cluster.sh maps it in /etc/hosts)", i)
		require.Contains(t, nodes, host+":", nodes)
		principal := c.Facts[fmt.Sprintf("nm%d.principal", i)]
		require.Equal(t, user+"/"+host+"@EXAMPLE.COM", principal)
		path := c.Facts[fmt.Sprintf("nm%d.keytab", i)]
		st, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), path)
		require.ElementsMatch(t, []string{user + "/" + host + "@EXAMPLE.COM", "HTTP/" + host + "@EXAMPLE.COM"}, keytabPrincipals(t, path), path)
	}

	cfg, err := config.Load(k.Krb5Config)
	require.NoError(t, err)
	require.Equal(t, k.Realm, cfg.LibDefaults.DefaultRealm)

	cc, err := credentials.LoadCCache(k.CCache)
	require.NoError(t, err)
	cl, err := client.NewFromCCache(cc, cfg, client.DisablePAFXFAST(true))
	require.NoError(t, err)
	service := strings.TrimSuffix(k.ServicePrincipal, "@"+k.Realm)
	_, _, err = cl.GetServiceTicket(service)
	require.NoError(t, err, "a service ticket for %s from the valid ccache", service)

	// bob's own ticket cache: his TGT, from which he too gets a service ticket.
	bobCC, err := credentials.LoadCCache(k.Bob.CCache)
	require.NoError(t, err)
	require.Equal(t, "bob", bobCC.GetClientPrincipalName().PrincipalNameString())
	bobCl, err := client.NewFromCCache(bobCC, cfg, client.DisablePAFXFAST(true))
	require.NoError(t, err)
	_, _, err = bobCl.GetServiceTicket(service)
	require.NoError(t, err, "a service ticket for %s from bob's ccache", service)

	// The administrator's ticket cache: the service principal's TGT.
	adminCC, err := credentials.LoadCCache(k.Admin.CCache)
	require.NoError(t, err)
	require.Equal(t, k.ServicePrincipal, adminCC.GetClientPrincipalName().PrincipalNameString()+"@"+adminCC.GetClientRealm())
	require.Equal(t, filepath.Join(c.Dir, "service.keytab"), k.Admin.Keytab)

	expired, err := credentials.LoadCCache(k.ExpiredCCache)
	require.NoError(t, err)
	require.Equal(t, "alice", expired.GetClientPrincipalName().PrincipalNameString())
	var tgts int
	for _, e := range expired.GetEntries() {
		if e.Server.PrincipalName.PrincipalNameString() != "krbtgt/"+k.Realm {
			continue
		}
		tgts++
		require.True(t, e.EndTime.Before(time.Now()), "the TGT in %s ends at %s: not expired", k.ExpiredCCache, e.EndTime)
	}
	require.Equal(t, 1, tgts, "one TGT in %s", k.ExpiredCCache)
}

// keytabPrincipals lists the principals of a keytab, each once (a keytab has a key per enctype).
func keytabPrincipals(t *testing.T, path string) []string {
	t.Helper()
	kt, err := keytab.Load(path)
	require.NoError(t, err)
	seen := map[string]bool{}
	var out []string
	for _, e := range kt.Entries {
		if p := e.Principal.String(); !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
