package yarn

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

type mapTokens struct {
	mu sync.Mutex
	m  map[string]security.Token
}

func (s *mapTokens) NMTokenFor(addr string) (security.Token, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[addr]
	return t, ok
}

func containerID(seq int64) *hadoopyarn.ContainerIdProto {
	app := &hadoopyarn.ApplicationIdProto{ClusterTimestamp: proto.Int64(1), Id: proto.Int32(2)}
	return &hadoopyarn.ContainerIdProto{AppId: app, AppAttemptId: &hadoopyarn.ApplicationAttemptIdProto{ApplicationId: app, AttemptId: proto.Int32(1)}, Id: proto.Int64(seq)}
}

func TestContainerManager(t *testing.T) {
	ctx := context.Background()
	toks := &mapTokens{m: map[string]security.Token{"n1:1": {Identifier: []byte("t1"), Password: []byte("p"), Kind: security.KindNMToken}}}
	m := NewContainerManager(toks, NMOptions{})
	var dials []*fakeRPC
	m.dial = func(addr string, tok security.Token) (rpcCaller, error) {
		f := &fakeRPC{token: tok, handle: func(method string, req, resp proto.Message) error {
			switch method {
			case "startContainers":
				r := req.(*hadoopyarn.StartContainersRequestProto)
				require.Len(t, r.GetStartContainerRequest(), 2)
				out := resp.(*hadoopyarn.StartContainersResponseProto)
				out.SucceededRequests = []*hadoopyarn.ContainerIdProto{containerID(1)}
				out.FailedRequests = []*hadoopyarn.ContainerExceptionMapProto{{
					ContainerId: containerID(2),
					Exception: &hadoopyarn.SerializedExceptionProto{
						ClassName: proto.String("org.apache.hadoop.yarn.exceptions.YarnException"),
						Message:   proto.String("Unauthorized request to start container.\n Attempt to relaunch"),
					},
				}}
				out.ServicesMetaData = []*hadoopyarn.StringBytesMapProto{{Key: proto.String("mapreduce_shuffle"), Value: []byte{1}}}
			case "stopContainers":
				return remote("org.apache.hadoop.security.token.SecretManager$InvalidToken", "bad")
			}
			return nil
		}}
		dials = append(dials, f)
		return f, nil
	}
	defer m.Close()

	reqs := []StartRequest{
		StartRequestFor(&hadoopyarn.ContainerProto{ContainerToken: &hadoopcommon.TokenProto{Identifier: []byte("c1")}}, &hadoopyarn.ContainerLaunchContextProto{}),
		{ContainerToken: &hadoopcommon.TokenProto{Identifier: []byte("c2")}},
	}
	res, err := m.StartContainers(ctx, "n1:1", reqs)
	require.NoError(t, err, "per-container failures are not an RPC error")
	require.Len(t, res.Started, 1)
	require.Len(t, res.Failed, 1)
	require.Equal(t, "yarn: container container_1_0002_01_000002 on n1:1: YarnException: Unauthorized request to start container. Attempt to relaunch", res.Failed[0].Error())
	require.Equal(t, []byte{1}, res.ServicesMetaData["mapreduce_shuffle"])

	// One connection per NM, reused.
	_, err = m.StartContainers(ctx, "n1:1", reqs)
	require.NoError(t, err)
	require.Len(t, dials, 1)

	// A new NMToken for the node: a new connection with it.
	toks.mu.Lock()
	toks.m["n1:1"] = security.Token{Identifier: []byte("t2"), Password: []byte("p"), Kind: security.KindNMToken}
	toks.mu.Unlock()
	_, err = m.StartContainers(ctx, "n1:1", reqs)
	require.NoError(t, err)
	require.Len(t, dials, 2)
	require.True(t, dials[0].closed)
	require.Equal(t, "t2", string(dials[1].token.Identifier))

	// Call-level errors name the method and node.
	_, _, err = m.StopContainers(ctx, "n1:1", []*hadoopyarn.ContainerIdProto{containerID(1)})
	require.True(t, IsInvalidToken(err))
	require.EqualError(t, err, "yarn: stopContainers n1:1: SecretManager$InvalidToken: bad")

	// No NMToken: a clear error, no dial.
	_, err = m.StartContainers(ctx, "n9:1", reqs)
	require.ErrorContains(t, err, "no NMToken for NodeManager n9:1")
	require.Len(t, dials, 2)

	require.NoError(t, m.Close())
	require.True(t, dials[1].closed)
	_, err = m.StartContainers(ctx, "n1:1", reqs)
	require.ErrorIs(t, err, ipc.ErrClosed)
}

func TestContainerTokensDropAMRMToken(t *testing.T) {
	creds := security.NewCredentials()
	creds.AddToken("amrm", security.Token{Identifier: []byte("a"), Password: []byte("b"), Kind: security.KindAMRMToken})
	creds.AddToken("hdfs", security.Token{Identifier: []byte("h"), Password: []byte("p"), Kind: security.KindHDFSDelegation, Service: "ha-hdfs:ns"})
	creds.AddSecret("key", []byte("secret"))

	b := ContainerTokens(creds)
	require.Equal(t, "HDTS\x00", string(b[:5]), "Writable format (version 0)")
	got, err := security.ParseCredentials(b)
	require.NoError(t, err)
	require.Empty(t, got.TokensOfKind(security.KindAMRMToken))
	require.Len(t, got.TokensOfKind(security.KindHDFSDelegation), 1)
	_, ok := got.Secret("key")
	require.True(t, ok)
	require.Len(t, creds.TokensOfKind(security.KindAMRMToken), 1, "the AM's own credentials are untouched")

	tok, err := AMRMToken(creds)
	require.NoError(t, err)
	require.Equal(t, "a", string(tok.Identifier))
	_, err = AMRMToken(got)
	require.ErrorContains(t, err, "no YARN_AM_RM_TOKEN")
	_, err = AMRMToken(nil)
	require.Error(t, err)

	p := TokenToProto(tok)
	require.Equal(t, tok.Kind, TokenFromProto(p).Kind)
	require.Equal(t, tok.Password, TokenFromProto(p).Password)
}

func TestLoadContainerCredentials(t *testing.T) {
	t.Setenv(contract.EnvTokenFile, "")
	_, err := LoadContainerCredentials()
	require.ErrorContains(t, err, contract.EnvTokenFile)

	creds := security.NewCredentials()
	creds.AddToken("amrm", security.Token{Identifier: []byte("a"), Password: []byte("b"), Kind: security.KindAMRMToken})
	path := t.TempDir() + "/container_tokens"
	require.NoError(t, creds.WriteFile(path, security.FormatWritable))
	t.Setenv(contract.EnvTokenFile, path)
	got, err := LoadContainerCredentials()
	require.NoError(t, err)
	_, err = AMRMToken(got)
	require.NoError(t, err)
}
