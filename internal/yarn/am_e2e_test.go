//go:build e2e

package yarn

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// The AM side against the real clusters, with this test process as an
// unmanaged AM (the RM creates the attempt and hands its AMRMToken out in
// the application report, as for Hadoop's UnmanagedAMLauncher):
//
//	go test -tags e2e -run E2EAM ./internal/yarn/

func TestE2EAMPlain(t *testing.T)   { testAMLifecycle(t, clustertest.Require(t)) }
func TestE2EAMPrivacy(t *testing.T) { testAMLifecycle(t, clustertest.RequirePrivacy(t)) }

// unmanagedAM submits an unmanaged-AM application and waits for its
// AMRMToken; the application is force-killed when the test ends (a no-op
// once it finished).
func unmanagedAM(t *testing.T, rm *ApplicationClient) (*hadoopyarn.ApplicationReportProto, security.Token) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	app, err := rm.GetNewApplication(ctx)
	require.NoError(t, err)
	id := app.GetApplicationId()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := rm.ForceKillApplication(ctx, id, "tfyarn e2e cleanup"); err != nil {
			t.Logf("cleanup: kill %s: %v", FormatApplicationID(id), err)
		}
	})
	require.NoError(t, rm.SubmitApplication(ctx, &hadoopyarn.ApplicationSubmissionContextProto{
		ApplicationId:   id,
		ApplicationName: proto.String("tfyarn-am-e2e"),
		Queue:           proto.String("default"),
		AmContainerSpec: &hadoopyarn.ContainerLaunchContextProto{},
		UnmanagedAm:     proto.Bool(true),
		MaxAppAttempts:  proto.Int32(1),
		Resource:        NewResource(128, 1, nil),
		ApplicationType: proto.String("TFYARN-TEST"),
	}))
	for {
		rep, err := rm.GetApplicationReport(ctx, id)
		require.NoError(t, err)
		if tp := rep.GetAmRmToken(); tp != nil {
			return rep, TokenFromProto(tp)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no AMRMToken for unmanaged AM %s (state %v)", FormatApplicationID(id), rep.GetYarnApplicationState())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func testAMLifecycle(t *testing.T, c *clustertest.Cluster) {
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	rm, err := NewApplicationClient(conf, ClientOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { rm.Close() }) // after the kill in unmanagedAM's cleanup
	rep, amrm := unmanagedAM(t, rm)
	appID := FormatApplicationID(rep.GetApplicationId())
	attemptID := FormatAttemptID(rep.GetCurrentApplicationAttemptId())
	t.Logf("%s attempt %s, %v", appID, attemptID, amrm)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// The AM's credentials as the NM would write them; a delegation token
	// stands in for what the client shipped.
	creds := security.NewCredentials()
	creds.AddToken("amrm", amrm)
	creds.AddToken("hdfs", security.Token{Identifier: []byte("hdfs-id"), Password: []byte("hdfs-pw"), Kind: security.KindHDFSDelegation, Service: "ha-hdfs:ns"})
	am, err := NewAMRMClient(conf, creds, AMOptions{})
	require.NoError(t, err)
	defer am.Close()

	reg, err := am.Register(ctx, "localhost", 0, "")
	require.NoError(t, err)
	require.Equal(t, "root.default", reg.Queue)
	require.GreaterOrEqual(t, MemoryMiB(reg.MaxCapability), int64(256))
	var typeNames []string
	for _, rt := range reg.ResourceTypes {
		typeNames = append(typeNames, rt.GetName())
	}
	require.Contains(t, typeNames, "yarn.io/gpu")

	// A bad response_id is refused with a clear error; the sequence then
	// goes on from the right one.
	am.mu.Lock()
	am.responseID = 41
	am.mu.Unlock()
	_, err = am.Allocate(ctx, nil, nil, 0)
	require.ErrorIs(t, err, ErrResponseIDMismatch)
	t.Logf("bad response id: %v", err)
	am.mu.Lock()
	am.responseID = 0
	am.mu.Unlock()

	// One task group: one allocation_request_id, absolute count 2, then 0.
	ask := func(n int32) []*hadoopyarn.ResourceRequestProto {
		return []*hadoopyarn.ResourceRequestProto{{
			Priority:            &hadoopyarn.PriorityProto{Priority: proto.Int32(1)},
			ResourceName:        proto.String("*"),
			Capability:          NewResource(256, 1, nil),
			NumContainers:       proto.Int32(n),
			RelaxLocality:       proto.Bool(true),
			AllocationRequestId: proto.Int64(7),
		}}
	}
	var got []*hadoopyarn.ContainerProto
	asks := ask(2)
	for len(got) < 2 {
		a, err := am.Allocate(ctx, asks, nil, 0.1)
		require.NoError(t, err)
		asks = nil // sent once; the RM keeps the outstanding count
		got = append(got, a.GetAllocatedContainers()...)
		if len(got) < 2 {
			sleepCtx(t, ctx, 200*time.Millisecond)
		}
	}
	require.Len(t, got, 2, "exactly the two containers asked for")
	a, err := am.Allocate(ctx, ask(0), nil, 0.2)
	require.NoError(t, err)
	require.Empty(t, a.GetAllocatedContainers())
	for _, ct := range got {
		require.EqualValues(t, 7, ct.GetAllocationRequestId())
		require.EqualValues(t, 256, MemoryMiB(ct.GetResource()))
		_, ok := am.NMToken(ct.GetNodeId())
		require.True(t, ok, "NMToken for %s", FormatNodeID(ct.GetNodeId()))
	}
	// No over-allocation: a few more heartbeats bring nothing, and the RM's
	// own view of the attempt counts two containers, over RPC and in Java's
	// `yarn container -list`.
	for range 3 {
		sleepCtx(t, ctx, 300*time.Millisecond)
		a, err := am.Allocate(ctx, nil, nil, 0.3)
		require.NoError(t, err)
		require.Empty(t, a.GetAllocatedContainers(), "over-allocation")
	}
	rmView := &hadoopyarn.GetContainersResponseProto{}
	require.NoError(t, rm.call(ctx, "getContainers", &hadoopyarn.GetContainersRequestProto{ApplicationAttemptId: rep.GetCurrentApplicationAttemptId()}, rmView))
	require.Len(t, rmView.GetContainers(), 2, "the RM's containers for %s", attemptID)
	list := applicationCLI(t, c, "container", "-list", attemptID)
	t.Logf("yarn container -list %s:\n%s", attemptID, list)
	require.Regexp(t, `Total number of containers :\s*2\b`, list)

	// Launch exit 0 in one and exit 3 in the other, with the NMTokens.
	cm := NewContainerManager(am, NMOptions{Protection: mustProtection(t, conf)})
	defer cm.Close()
	want := map[string]int32{}
	tokens := ContainerTokens(creds)
	parsed, err := security.ParseCredentials(tokens)
	require.NoError(t, err)
	require.Empty(t, parsed.TokensOfKind(security.KindAMRMToken), "tasks never get the AMRMToken")
	require.Len(t, parsed.TokensOfKind(security.KindHDFSDelegation), 1)
	for i, ct := range got {
		code := []int32{0, 3}[i]
		want[FormatContainerID(ct.GetId())] = code
		res, err := cm.StartContainers(ctx, FormatNodeID(ct.GetNodeId()), []StartRequest{StartRequestFor(ct, &hadoopyarn.ContainerLaunchContextProto{
			Command: []string{"sh -c 'exit " + strconv.Itoa(int(code)) + "'"},
			Tokens:  tokens,
		})})
		require.NoError(t, err)
		require.Empty(t, res.Failed)
		require.Len(t, res.Started, 1)
		require.Equal(t, FormatContainerID(ct.GetId()), FormatContainerID(res.Started[0]))
	}

	// A container the NM refuses is one container's failure, not an RPC
	// error: starting the first container again.
	dup, err := cm.StartContainers(ctx, FormatNodeID(got[0].GetNodeId()), []StartRequest{StartRequestFor(got[0], &hadoopyarn.ContainerLaunchContextProto{Command: []string{"true"}})})
	require.NoError(t, err)
	require.Empty(t, dup.Started)
	require.Len(t, dup.Failed, 1)
	t.Logf("duplicate start: %v", dup.Failed[0])
	require.Equal(t, FormatContainerID(got[0].GetId()), FormatContainerID(dup.Failed[0].ContainerID))
	require.Contains(t, dup.Failed[0].Message, "relaunch the same container")

	// A forged container token, though, fails the whole call: the NM's
	// ContainerManagerImpl rethrows InvalidToken after recording it. The
	// connection stays usable.
	forged := proto.Clone(got[0].GetContainerToken()).(*hadoopcommon.TokenProto)
	forged.Password[0] ^= 0xff
	_, err = cm.StartContainers(ctx, FormatNodeID(got[0].GetNodeId()), []StartRequest{{ContainerToken: forged, LaunchContext: &hadoopyarn.ContainerLaunchContextProto{Command: []string{"true"}}}})
	var nmErr *NMError
	require.ErrorAs(t, err, &nmErr)
	require.True(t, IsInvalidToken(err), "%v", err)
	t.Logf("forged token: %v", err)
	_, _, err = cm.GetContainerStatuses(ctx, FormatNodeID(got[0].GetNodeId()), []*hadoopyarn.ContainerIdProto{got[0].GetId()})
	require.NoError(t, err)

	// Completions arrive through heartbeats.
	done := map[string]int32{}
	for len(done) < 2 {
		a, err := am.Allocate(ctx, nil, nil, 0.5)
		require.NoError(t, err)
		for _, st := range a.GetCompletedContainerStatuses() {
			done[FormatContainerID(st.GetContainerId())] = st.GetExitStatus()
			t.Logf("completed %s: exit %d %q", FormatContainerID(st.GetContainerId()), st.GetExitStatus(), st.GetDiagnostics())
		}
		if len(done) < 2 {
			sleepCtx(t, ctx, 300*time.Millisecond)
		}
	}
	require.Equal(t, want, done)

	require.NoError(t, am.Finish(ctx, hadoopyarn.FinalApplicationStatusProto_APP_SUCCEEDED, "e2e done", ""))
	final, err := rm.WaitApplication(ctx, rep.GetApplicationId(), 200*time.Millisecond, func(r *hadoopyarn.ApplicationReportProto) bool {
		return IsTerminal(r.GetYarnApplicationState())
	})
	require.NoError(t, err)
	require.Equal(t, hadoopyarn.FinalApplicationStatusProto_APP_SUCCEEDED, final.GetFinalApplicationStatus())
	status := applicationCLI(t, c, "application", "-status", appID)
	require.Regexp(t, regexp.MustCompile(`Final-State\s*:\s*SUCCEEDED`), status)
}

// applicationCLI runs Hadoop's own `yarn application|container ...` against the cluster.
func applicationCLI(t *testing.T, c *clustertest.Cluster, args ...string) string {
	t.Helper()
	return c.Hadoop(t, append([]string{"yarn"}, args...)...)
}

func mustProtection(t *testing.T, conf *hadoopconf.Config) []string {
	p, err := conf.RPCProtection()
	require.NoError(t, err)
	return p
}

func sleepCtx(t *testing.T, ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
		t.Fatalf("timed out: %v", ctx.Err())
	case <-time.After(d):
	}
}
