//go:build e2e

package ipc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// Token auth against the real ResourceManagers, with the AMRMToken of an
// unmanaged AM (the RM makes an attempt without launching a container and
// hands the token out in the application report):
//
//	go test -tags e2e -run E2EDigest ./internal/ipc/

const (
	appClientProtocol = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB"
	amProtocol        = "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB"
)

// unmanagedAMToken submits an unmanaged-AM application and returns its
// AMRMToken; the application is killed when the test ends.
func unmanagedAMToken(t *testing.T, conf *hadoopconf.Config) security.Token {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rmAddrs, err := conf.RMAddresses(hadoopconf.RMClient)
	require.NoError(t, err)
	rm, err := NewClient(Config{Addresses: rmAddrs, Protocol: appClientProtocol})
	require.NoError(t, err)
	t.Cleanup(func() { rm.Close() })

	newApp := &hadoopyarn.GetNewApplicationResponseProto{}
	require.NoError(t, rm.Call(ctx, "getNewApplication", &hadoopyarn.GetNewApplicationRequestProto{}, newApp))
	appID := newApp.GetApplicationId()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := rm.Call(ctx, "forceKillApplication", &hadoopyarn.KillApplicationRequestProto{ApplicationId: appID}, &hadoopyarn.KillApplicationResponseProto{})
		if err != nil {
			t.Logf("killing application %d_%d: %v", appID.GetClusterTimestamp(), appID.GetId(), err)
		}
	})
	require.NoError(t, rm.Call(ctx, "submitApplication", &hadoopyarn.SubmitApplicationRequestProto{
		ApplicationSubmissionContext: &hadoopyarn.ApplicationSubmissionContextProto{
			ApplicationId:   appID,
			ApplicationName: proto.String("tfyarn-ipc-digest-e2e"),
			Queue:           proto.String("default"),
			AmContainerSpec: &hadoopyarn.ContainerLaunchContextProto{},
			UnmanagedAm:     proto.Bool(true),
			MaxAppAttempts:  proto.Int32(1),
			Resource:        &hadoopyarn.ResourceProto{Memory: proto.Int64(128), VirtualCores: proto.Int32(1)},
			ApplicationType: proto.String("TFYARN-TEST"),
		},
	}, &hadoopyarn.SubmitApplicationResponseProto{}))

	for {
		rep := &hadoopyarn.GetApplicationReportResponseProto{}
		require.NoError(t, rm.Call(ctx, "getApplicationReport", &hadoopyarn.GetApplicationReportRequestProto{ApplicationId: appID}, rep))
		if tp := rep.GetApplicationReport().GetAmRmToken(); tp != nil {
			return security.Token{Identifier: tp.GetIdentifier(), Password: tp.GetPassword(), Kind: tp.GetKind(), Service: tp.GetService()}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no AMRMToken in the report of the unmanaged AM: state %v", rep.GetApplicationReport().GetYarnApplicationState())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// schedulerClient reaches the RM's AM service with token auth.
func schedulerClient(t *testing.T, conf *hadoopconf.Config, d *DigestMD5) *Client {
	t.Helper()
	addrs, err := conf.RMAddresses(hadoopconf.RMScheduler)
	require.NoError(t, err)
	c, err := NewClient(Config{Addresses: addrs, Protocol: amProtocol, SASL: []SaslMechanism{d}, RequireSASL: true})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func testDigestRegister(t *testing.T, c *clustertest.Cluster, wantQOP string) {
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	prot, err := conf.RPCProtection()
	require.NoError(t, err)
	tok := unmanagedAMToken(t, conf)
	require.Equal(t, security.KindAMRMToken, tok.Kind)
	t.Logf("AMRMToken %v", tok)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// A wrong password is refused by the server, with its reason.
	bad := tok.Clone()
	bad.Password[0] ^= 0xff
	cBad := schedulerClient(t, conf, &DigestMD5{Tokens: []security.Token{bad}, Kind: security.KindAMRMToken, Protection: prot})
	err = cBad.Call(ctx, "registerApplicationMaster", &hadoopyarn.RegisterApplicationMasterRequestProto{}, &hadoopyarn.RegisterApplicationMasterResponseProto{})
	require.Error(t, err)
	t.Logf("wrong password: %v", err)
	require.True(t, IsClass(err, "SaslException"), "want a SaslException from the server, got %v", err)
	require.NotContains(t, err.Error(), base64Std(tok.Password))

	var qop, cipher string
	d := &DigestMD5{
		Tokens: []security.Token{tok}, Kind: security.KindAMRMToken, Protection: prot,
		OnComplete: func(q, c string) { qop, cipher = q, c },
	}
	am := schedulerClient(t, conf, d)
	resp := &hadoopyarn.RegisterApplicationMasterResponseProto{}
	require.NoError(t, am.Call(ctx, "registerApplicationMaster", &hadoopyarn.RegisterApplicationMasterRequestProto{
		Host: proto.String("localhost"), RpcPort: proto.Int32(0), TrackingUrl: proto.String(""),
	}, resp))
	require.Equal(t, wantQOP, qop)
	t.Logf("registered over qop %s cipher %q: max capability %v, queue %q", qop, cipher, resp.GetMaximumCapability(), resp.GetQueue())
	require.Greater(t, resp.GetMaximumCapability().GetMemory(), int64(0))
	require.Equal(t, "root.default", resp.GetQueue(), "the RM answers with the full queue path")

	if wantQOP != qopAuthConf {
		return
	}
	require.Equal(t, "rc4", cipher)
	// The other high-strength cipher, on a second connection of the same
	// attempt: a first heartbeat.
	d3 := &DigestMD5{
		Tokens: []security.Token{tok}, Kind: security.KindAMRMToken, Protection: prot, Ciphers: []string{"3des"},
		OnComplete: func(q, c string) { qop, cipher = q, c },
	}
	am3 := schedulerClient(t, conf, d3)
	alloc := &hadoopyarn.AllocateResponseProto{}
	require.NoError(t, am3.Call(ctx, "allocate", &hadoopyarn.AllocateRequestProto{ResponseId: proto.Int32(0), Progress: proto.Float32(0)}, alloc))
	require.Equal(t, "3des", cipher)
	require.EqualValues(t, 1, alloc.GetResponseId())

	// A request far over one 65,510-byte WRAP piece (and a reply): the RM
	// must reassemble the pieces. Blacklisting hosts that don't exist is
	// harmless, and the next heartbeat takes them back.
	var hosts []string
	for i := range 6000 {
		hosts = append(hosts, fmt.Sprintf("no-such-host-%05d.tfyarn.invalid", i))
	}
	require.NoError(t, am3.Call(ctx, "allocate", &hadoopyarn.AllocateRequestProto{
		ResponseId: proto.Int32(1), BlacklistRequest: &hadoopyarn.ResourceBlacklistRequestProto{BlacklistAdditions: hosts},
	}, alloc))
	require.NoError(t, am3.Call(ctx, "allocate", &hadoopyarn.AllocateRequestProto{
		ResponseId: proto.Int32(2), BlacklistRequest: &hadoopyarn.ResourceBlacklistRequestProto{BlacklistRemovals: hosts},
	}, alloc))
	require.EqualValues(t, 3, alloc.GetResponseId())
}

func TestE2EDigestRegisterPlain(t *testing.T) {
	testDigestRegister(t, clustertest.Require(t), qopAuth)
}

func TestE2EDigestRegisterPrivacy(t *testing.T) {
	testDigestRegister(t, clustertest.RequirePrivacy(t), qopAuthConf)
}
