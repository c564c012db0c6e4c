package yarn

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// fakeRPC stands in for an *ipc.Client: it records calls and lets a handler
// fill in the response.
type fakeRPC struct {
	token  security.Token // what it was "dialed" with
	handle func(method string, req, resp proto.Message) error

	mu     sync.Mutex
	calls  []string
	reqs   []proto.Message
	closed bool
}

func (f *fakeRPC) Call(_ context.Context, method string, req, resp proto.Message) error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return ipc.ErrClosed
	}
	f.calls = append(f.calls, method)
	f.reqs = append(f.reqs, proto.Clone(req))
	f.mu.Unlock()
	return f.handle(method, req, resp)
}
func (f *fakeRPC) Addr() string { return "rm:8030" }
func (f *fakeRPC) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// fakeRM is a scripted scheduler: it checks response ids like the RM does.
type fakeRM struct {
	t          *testing.T
	mu         sync.Mutex
	dials      []*fakeRPC
	lastID     int32
	registered bool
	forget     bool // next allocate: "the RM restarted"
	rollToken  *hadoopcommon.TokenProto
	nmTokens   []*hadoopyarn.NMTokenProto
	finishNo   int   // finish calls answered with is_unregistered=false before true
	refuse     error // allocate answers this
}

func remote(class, msg string) error { return &ipc.RemoteError{Class: class, Message: msg} }

func (rm *fakeRM) dial(tok security.Token) (rpcCaller, error) {
	f := &fakeRPC{token: tok}
	f.handle = func(method string, req, resp proto.Message) error {
		rm.mu.Lock()
		defer rm.mu.Unlock()
		switch method {
		case "registerApplicationMaster":
			rm.registered, rm.lastID = true, 0
			resp.(*hadoopyarn.RegisterApplicationMasterResponseProto).Queue = proto.String("root.default")
			resp.(*hadoopyarn.RegisterApplicationMasterResponseProto).NmTokensFromPreviousAttempts = []*hadoopyarn.NMTokenProto{nmToken("old-node", 1, "old")}
		case "allocate":
			if rm.forget {
				rm.forget, rm.registered = false, false
			}
			if !rm.registered {
				return remote(ApplicationMasterNotRegisteredException, "AM not registered")
			}
			if rm.refuse != nil {
				return rm.refuse
			}
			r := req.(*hadoopyarn.AllocateRequestProto)
			if r.GetResponseId() != rm.lastID {
				return remote(InvalidApplicationMasterRequestException, "Invalid responseId in AllocateRequest from application attempt: x expect responseId to be 1 but get 9")
			}
			rm.lastID++
			out := resp.(*hadoopyarn.AllocateResponseProto)
			out.ResponseId = proto.Int32(rm.lastID)
			out.NmTokens, rm.nmTokens = rm.nmTokens, nil
			out.AmRmToken, rm.rollToken = rm.rollToken, nil
		case "finishApplicationMaster":
			if !rm.registered {
				return remote(ApplicationMasterNotRegisteredException, "AM not registered")
			}
			done := rm.finishNo == 0
			if rm.finishNo > 0 {
				rm.finishNo--
			}
			resp.(*hadoopyarn.FinishApplicationMasterResponseProto).IsUnregistered = proto.Bool(done)
		}
		return nil
	}
	rm.mu.Lock()
	rm.dials = append(rm.dials, f)
	rm.mu.Unlock()
	return f, nil
}

func nmToken(host string, port int32, id string) *hadoopyarn.NMTokenProto {
	return &hadoopyarn.NMTokenProto{
		NodeId: &hadoopyarn.NodeIdProto{Host: proto.String(host), Port: proto.Int32(port)},
		Token:  &hadoopcommon.TokenProto{Identifier: []byte(id), Password: []byte("pw-" + id), Kind: proto.String(security.KindNMToken), Service: proto.String(host)},
	}
}

func newFakeAM(t *testing.T, opts AMOptions) (*AMRMClient, *fakeRM) {
	rm := &fakeRM{t: t}
	c := &AMRMClient{addrs: []string{"rm:8030"}, opts: opts, nmTokens: map[string]security.Token{}, dial: rm.dial}
	require.NoError(t, c.init(security.Token{Identifier: []byte("amrm-1"), Password: []byte("p1"), Kind: security.KindAMRMToken, Service: "10.0.0.1:8030"}))
	t.Cleanup(func() { c.Close() })
	return c, rm
}

func TestAMRMResponseIDsAndNMTokens(t *testing.T) {
	ctx := context.Background()
	am, rm := newFakeAM(t, AMOptions{})
	_, err := am.Allocate(ctx, nil, nil, 0)
	require.ErrorContains(t, err, "before registerApplicationMaster")

	reg, err := am.Register(ctx, "host", 1, "http://x")
	require.NoError(t, err)
	require.Equal(t, "root.default", reg.Queue)
	_, ok := am.NMToken(&hadoopyarn.NodeIdProto{Host: proto.String("old-node"), Port: proto.Int32(1)})
	require.True(t, ok, "NMTokens from previous attempts are cached")

	rm.nmTokens = []*hadoopyarn.NMTokenProto{nmToken("n1", 45454, "a")}
	for want := int32(1); want <= 3; want++ {
		a, err := am.Allocate(ctx, nil, nil, 0.5)
		require.NoError(t, err)
		require.Equal(t, want, a.GetResponseId())
		require.False(t, a.Reregistered)
	}
	sent := rm.dials[0].reqs
	for i, id := range []int32{0, 1, 2} {
		require.Equal(t, id, sent[i+1].(*hadoopyarn.AllocateRequestProto).GetResponseId(), "each allocate follows the last response")
	}
	tok, ok := am.NMTokenFor("n1:45454")
	require.True(t, ok)
	require.Equal(t, "a", string(tok.Identifier))
	_, ok = am.NMTokenFor("n2:45454")
	require.False(t, ok)
}

func TestAMRMReregistersWhenForgotten(t *testing.T) {
	ctx := context.Background()
	am, rm := newFakeAM(t, AMOptions{})
	_, err := am.Register(ctx, "host", 1, "")
	require.NoError(t, err)
	_, err = am.Allocate(ctx, nil, nil, 0)
	require.NoError(t, err)
	rm.forget = true
	ask := []*hadoopyarn.ResourceRequestProto{{NumContainers: proto.Int32(2)}}
	a, err := am.Allocate(ctx, ask, nil, 0)
	require.NoError(t, err)
	require.True(t, a.Reregistered)
	require.Equal(t, []string{"registerApplicationMaster", "allocate", "allocate", "registerApplicationMaster", "allocate"}, rm.dials[0].calls)
	last := rm.dials[0].reqs[4].(*hadoopyarn.AllocateRequestProto)
	require.EqualValues(t, 0, last.GetResponseId(), "a new registration starts a new sequence")
	require.Len(t, last.GetAsk(), 1, "the asks are resent after re-registering")
	require.EqualValues(t, "host", rm.dials[0].reqs[3].(*hadoopyarn.RegisterApplicationMasterRequestProto).GetHost())
}

func TestAMRMResponseIDMismatch(t *testing.T) {
	ctx := context.Background()
	am, _ := newFakeAM(t, AMOptions{})
	_, err := am.Register(ctx, "host", 1, "")
	require.NoError(t, err)
	am.responseID = 9
	_, err = am.Allocate(ctx, nil, nil, 0)
	require.ErrorIs(t, err, ErrResponseIDMismatch)
	require.True(t, ipc.IsClass(err, InvalidApplicationMasterRequestException))
	require.ErrorContains(t, err, "sent 9")
	require.ErrorContains(t, err, "rm:8030")
}

func TestAMRMTokenRoll(t *testing.T) {
	ctx := context.Background()
	am, rm := newFakeAM(t, AMOptions{})
	_, err := am.Register(ctx, "host", 1, "")
	require.NoError(t, err)
	rm.rollToken = &hadoopcommon.TokenProto{Identifier: []byte("amrm-2"), Password: []byte("p2"), Kind: proto.String(security.KindAMRMToken), Service: proto.String("")}
	_, err = am.Allocate(ctx, nil, nil, 0)
	require.NoError(t, err)

	require.Len(t, rm.dials, 2, "a new connection for the new token")
	require.True(t, rm.dials[0].closed, "the old connection is closed")
	require.Equal(t, "amrm-2", string(rm.dials[1].token.Identifier))
	require.Equal(t, "10.0.0.1:8030", rm.dials[1].token.Service, "an empty service keeps the old one")
	require.Equal(t, "amrm-2", string(am.Token().Identifier))

	a, err := am.Allocate(ctx, nil, nil, 0)
	require.NoError(t, err)
	require.EqualValues(t, 2, a.GetResponseId(), "the sequence goes on over the new connection")
	require.Equal(t, []string{"allocate"}, rm.dials[1].calls)
}

func TestAMRMFinishWaitsForUnregister(t *testing.T) {
	ctx := context.Background()
	am, rm := newFakeAM(t, AMOptions{FinishBackoff: time.Millisecond})
	_, err := am.Register(ctx, "host", 1, "")
	require.NoError(t, err)
	rm.finishNo = 3
	require.NoError(t, am.Finish(ctx, hadoopyarn.FinalApplicationStatusProto_APP_SUCCEEDED, "ok", ""))
	require.Equal(t, 4, len(rm.dials[0].calls)-1)
	req := rm.dials[0].reqs[1].(*hadoopyarn.FinishApplicationMasterRequestProto)
	require.Equal(t, hadoopyarn.FinalApplicationStatusProto_APP_SUCCEEDED, req.GetFinalApplicationStatus())

	// Bounded.
	am2, rm2 := newFakeAM(t, AMOptions{FinishBackoff: time.Millisecond, FinishAttempts: 3})
	_, err = am2.Register(ctx, "host", 1, "")
	require.NoError(t, err)
	rm2.finishNo = 100
	err = am2.Finish(ctx, hadoopyarn.FinalApplicationStatusProto_APP_FAILED, "", "")
	require.ErrorContains(t, err, "after 3 calls")

	// And within ctx.
	am3, rm3 := newFakeAM(t, AMOptions{FinishBackoff: time.Hour})
	_, err = am3.Register(ctx, "host", 1, "")
	require.NoError(t, err)
	rm3.finishNo = 100
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	err = am3.Finish(cctx, hadoopyarn.FinalApplicationStatusProto_APP_FAILED, "", "")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// The RM forgot the attempt: register again, then finish.
	am4, rm4 := newFakeAM(t, AMOptions{FinishBackoff: time.Millisecond})
	_, err = am4.Register(ctx, "host", 1, "")
	require.NoError(t, err)
	rm4.registered = false
	require.NoError(t, am4.Finish(ctx, hadoopyarn.FinalApplicationStatusProto_APP_KILLED, "", ""))
	require.Equal(t, []string{"registerApplicationMaster", "finishApplicationMaster", "registerApplicationMaster", "finishApplicationMaster"}, rm4.dials[0].calls)
}

func TestAMRMClosed(t *testing.T) {
	am, _ := newFakeAM(t, AMOptions{})
	require.NoError(t, am.Close())
	_, err := am.Register(context.Background(), "h", 1, "")
	require.True(t, errors.Is(err, ipc.ErrClosed))
}

func TestFormatContainerID(t *testing.T) {
	app := &hadoopyarn.ApplicationIdProto{ClusterTimestamp: proto.Int64(1700000000000), Id: proto.Int32(7)}
	att := &hadoopyarn.ApplicationAttemptIdProto{ApplicationId: app, AttemptId: proto.Int32(1)}
	require.Equal(t, "appattempt_1700000000000_0007_000001", FormatAttemptID(att))
	require.Equal(t, "container_1700000000000_0007_01_000002",
		FormatContainerID(&hadoopyarn.ContainerIdProto{AppId: app, AppAttemptId: att, Id: proto.Int64(2)}))
	require.Equal(t, "container_e03_1700000000000_0007_01_000002",
		FormatContainerID(&hadoopyarn.ContainerIdProto{AppId: app, AppAttemptId: att, Id: proto.Int64(3<<40 | 2)}))
	require.Equal(t, "", FormatContainerID(nil))
}

func TestAMRMRefusedRequests(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		err     error
		refused bool
	}{
		{remote(InvalidLabelResourceRequestException, "Invalid label resource request, cluster do not contain , label= nosuchlabel"), true},
		{remote(InvalidResourceRequestException, "Invalid resource request! Cannot allocate containers as requested resource is greater than maximum allowed allocation."), true},
		{remote(InvalidResourceBlacklistRequestException, "bad blacklist"), true},
		{remote(SchedulerInvalidResoureRequestException, "zero resource"), true},
		{remote("org.apache.hadoop.ipc.StandbyException", "standby"), false},
		{remote("java.io.IOException", "boom"), false},
		{ipc.ErrClosed, false},
	}
	for _, tc := range tests {
		am, rm := newFakeAM(t, AMOptions{})
		_, err := am.Register(ctx, "host", 1, "")
		require.NoError(t, err)
		rm.refuse = tc.err
		_, err = am.Allocate(ctx, nil, nil, 0)
		require.Error(t, err)
		var refused *RequestRefusedError
		require.Equal(t, tc.refused, errors.As(err, &refused), "%v", err)
		if !tc.refused {
			continue
		}
		var re *ipc.RemoteError
		require.True(t, errors.As(tc.err, &re))
		require.Equal(t, re.Class, refused.Class)
		require.Equal(t, re.Message, refused.Message)
		require.ErrorContains(t, err, "refused the request: "+re.Class[strings.LastIndex(re.Class, ".")+1:]+": "+re.Message)
		require.ErrorIs(t, err, re, "the RM's error stays in the chain")
		require.Zero(t, am.responseID, "the response id does not move")
	}
}

// Exclude's hosts go out once, with the next allocate call; a failed call
// keeps them for the one after it; after re-registering every host goes
// again (the RM forgot the attempt's blacklist).
func TestAMRMExclude(t *testing.T) {
	ctx := context.Background()
	am, rm := newFakeAM(t, AMOptions{})
	_, err := am.Register(ctx, "host", 1, "")
	require.NoError(t, err)
	additions := func() []string {
		reqs := rm.dials[0].reqs
		return reqs[len(reqs)-1].(*hadoopyarn.AllocateRequestProto).GetBlacklistRequest().GetBlacklistAdditions()
	}
	am.Exclude("nm1", "nm1")
	rm.refuse = remote("java.io.IOException", "busy")
	_, err = am.Allocate(ctx, nil, nil, 0)
	require.Error(t, err)
	require.Equal(t, []string{"nm1"}, additions())
	rm.refuse = nil
	_, err = am.Allocate(ctx, nil, nil, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"nm1"}, additions(), "sent again after the failed call")
	_, err = am.Allocate(ctx, nil, nil, 0)
	require.NoError(t, err)
	require.Empty(t, additions(), "sent once")
	am.Exclude("nm2")
	_, err = am.Allocate(ctx, nil, nil, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"nm2"}, additions(), "only what is new")
	rm.forget = true
	_, err = am.Allocate(ctx, nil, nil, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"nm1", "nm2"}, additions(), "all again after re-registering")
}
