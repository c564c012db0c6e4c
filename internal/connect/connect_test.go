package connect

import (
	"testing"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// TestRMOptionsHAPrincipals: with two ResourceManagers, the GSSAPI
// mechanism knows each one's principal by address (_HOST replaced by that
// RM's host, lower-cased), so that a failover is checked against the
// principal of the RM actually dialled; before, two RMs meant no check.
func TestRMOptionsHAPrincipals(t *testing.T) {
	conf := hadoopconf.New(func(string) (string, bool) { return "", false })
	for k, v := range map[string]string{
		hadoopconf.KeyAuthentication:        "kerberos",
		hadoopconf.KeyRMHAEnabled:           "true",
		hadoopconf.KeyRMHAIDs:               "rm1,rm2",
		"yarn.resourcemanager.address.rm1":  "rm1.example.com:8032",
		"yarn.resourcemanager.address.rm2":  "RM2.example.com:8032",
		"yarn.resourcemanager.hostname.rm1": "rm1.example.com",
		"yarn.resourcemanager.hostname.rm2": "RM2.example.com",
		hadoopconf.KeyRMPrincipal:           "rm/_HOST@EXAMPLE.COM",
	} {
		conf.Set(k, v)
	}
	login := &security.KerberosLogin{
		Client:    krbclient.NewWithPassword("alice", "EXAMPLE.COM", "unused", krbconfig.New()),
		Principal: "alice@EXAMPLE.COM",
		User:      "alice",
	}
	opts, err := RMOptions(conf, login, yarn.ClientOptions{})
	require.NoError(t, err)
	require.Len(t, opts.SASL, 1)
	k, ok := opts.SASL[0].(*ipc.Kerberos)
	require.True(t, ok, "%T", opts.SASL[0])
	require.Equal(t, map[string]string{
		"rm1.example.com:8032": "rm/rm1.example.com@EXAMPLE.COM",
		"RM2.example.com:8032": "rm/rm2.example.com@EXAMPLE.COM",
	}, k.ServerPrincipals)
	require.Empty(t, k.ServerPrincipal, "no single principal for every RM")
	require.True(t, opts.RequireSASL)
	require.Equal(t, "alice", opts.User)
}
