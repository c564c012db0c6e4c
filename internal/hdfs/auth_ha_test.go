package hdfs

import (
	"testing"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
)

// TestNameNodeAuthHAPrincipals: with an HA nameservice of two NameNodes, the
// GSSAPI mechanism knows each NameNode's principal by address (_HOST
// replaced by that NameNode's host), so that a failover is checked against
// the principal of the NameNode actually dialled; before, two NameNodes
// meant no check.
func TestNameNodeAuthHAPrincipals(t *testing.T) {
	conf := hadoopconf.New(func(string) (string, bool) { return "", false })
	for k, v := range map[string]string{
		hadoopconf.KeyAuthentication:            "kerberos",
		hadoopconf.KeyNameservices:              "ns1",
		hadoopconf.KeyHANameNodesPrefix + "ns1": "nn1,nn2",
		"dfs.namenode.rpc-address.ns1.nn1":      "nn1.example.com:8020",
		"dfs.namenode.rpc-address.ns1.nn2":      "nn2.example.com:8020",
		hadoopconf.KeyNameNodePrincipal:         "nn/_HOST@EXAMPLE.COM",
	} {
		conf.Set(k, v)
	}
	target, err := conf.HDFS("hdfs://ns1")
	require.NoError(t, err)
	login := &security.KerberosLogin{
		Client:    krbclient.NewWithPassword("alice", "EXAMPLE.COM", "unused", krbconfig.New()),
		Principal: "alice@EXAMPLE.COM",
		User:      "alice",
	}
	auth, err := nameNodeAuth(conf, target, Options{Kerberos: login})
	require.NoError(t, err)
	require.Len(t, auth.sasl, 1)
	k, ok := auth.sasl[0].(*ipc.Kerberos)
	require.True(t, ok, "%T", auth.sasl[0])
	require.Equal(t, map[string]string{
		"nn1.example.com:8020": "nn/nn1.example.com@EXAMPLE.COM",
		"nn2.example.com:8020": "nn/nn2.example.com@EXAMPLE.COM",
	}, k.ServerPrincipals)
	require.Empty(t, k.ServerPrincipal, "no single principal for every NameNode")
	require.Equal(t, "alice", auth.user)
}
