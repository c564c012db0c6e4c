//go:build e2e

package ipc

import (
	"context"
	"strings"
	"testing"
	"time"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Kerberos against the kerberized test cluster (in-JVM KDC, realm EXAMPLE.COM), started if needed:
//
//	go test -tags e2e -run E2EKerberos ./internal/ipc/

// kerberosCluster starts (or reuses) the kerberized test cluster and
// returns its facts (the ready file): it fails loudly when it cannot.
func kerberosCluster(t *testing.T) map[string]string {
	c := clustertest.RequireKerberos(t)
	require.NotNil(t, c.Kerberos)
	require.NotEmpty(t, c.Facts["expired.ccache"], "the kerberos cluster writes an expired ticket cache")
	return c.Facts
}

func kerberosClient(t *testing.T, kv map[string]string, ccache string) *krbclient.Client {
	cfg, err := config.Load(kv["krb5.conf"])
	require.NoError(t, err)
	cc, err := credentials.LoadCCache(ccache)
	require.NoError(t, err)
	cl, err := krbclient.NewFromCCache(cc, cfg, krbclient.DisablePAFXFAST(true))
	require.NoError(t, err)
	return cl
}

func TestE2EKerberos(t *testing.T) {
	kv := kerberosCluster(t)
	cl := kerberosClient(t, kv, kv["ccache"])
	host := func(addr string) string { h, _, _ := strings.Cut(addr, ":"); return h }
	for _, prot := range [][]string{nil, {"privacy"}, {"integrity"}, {"authentication"}} {
		t.Run("rm/"+strings.Join(prot, ","), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var qop string
			k := &Kerberos{Client: cl, ServerPrincipal: "root/" + host(kv["rm"]) + "@" + kv["realm"], Protection: prot, OnComplete: func(q string) { qop = q }}
			c, err := Dial(ctx, Config{Addresses: []string{kv["rm"]}, Protocol: "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB", SASL: []SaslMechanism{k}, RequireSASL: true})
			require.NoError(t, err)
			defer c.Close()
			resp := &hadoopyarn.GetClusterMetricsResponseProto{}
			require.NoError(t, c.Call(ctx, "getClusterMetrics", &hadoopyarn.GetClusterMetricsRequestProto{}, resp))
			t.Logf("qop %s: %d node managers", qop, resp.GetClusterMetrics().GetNumNodeManagers())
			if len(prot) == 1 {
				require.Equal(t, map[string]string{"privacy": qopAuthConf, "integrity": qopAuthInt, "authentication": qopAuth}[prot[0]], qop)
			}
		})
	}
	t.Run("nn", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		nn := strings.TrimPrefix(kv["fs.defaultFS"], "hdfs://")
		var qop string
		k := &Kerberos{Client: cl, ServerPrincipal: "root/" + host(nn) + "@" + kv["realm"], OnComplete: func(q string) { qop = q }}
		c, err := Dial(ctx, Config{Addresses: []string{nn}, Protocol: "org.apache.hadoop.hdfs.protocol.ClientProtocol", SASL: []SaslMechanism{k}, RequireSASL: true})
		require.NoError(t, err)
		defer c.Close()
		resp := &emptypb.Empty{}
		require.NoError(t, c.Call(ctx, "getFsStats", &emptypb.Empty{}, resp))
		t.Logf("qop %s: getFsStats %d bytes", qop, len(resp.ProtoReflect().GetUnknown()))
	})
	t.Run("expired", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		k := &Kerberos{Client: kerberosClient(t, kv, kv["expired.ccache"]), ServerPrincipal: "root/" + host(kv["rm"]) + "@" + kv["realm"]}
		_, err := Dial(ctx, Config{Addresses: []string{kv["rm"]}, Protocol: "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB", SASL: []SaslMechanism{k}, RequireSASL: true})
		require.Error(t, err)
		t.Log(err)
	})
	t.Run("mismatch", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		k := &Kerberos{Client: cl, ServerPrincipal: "rm/elsewhere.example.com@" + kv["realm"]}
		_, err := Dial(ctx, Config{Addresses: []string{kv["rm"]}, Protocol: "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB", SASL: []SaslMechanism{k}, RequireSASL: true})
		require.ErrorContains(t, err, "does not match the configured")
		t.Log(err)
	})
}
