package ipc

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

const testProtocol = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB"

func newTestClient(t *testing.T, cfg Config, addrs ...string) *Client {
	t.Helper()
	cfg.Addresses = addrs
	if cfg.Protocol == "" {
		cfg.Protocol = testProtocol
	}
	if cfg.User == "" {
		cfg.User = "alice"
	}
	c, err := NewClient(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func callString(ctx context.Context, c *Client, method, in string) (string, error) {
	out := &wrapperspb.StringValue{}
	err := c.Call(ctx, method, wrapperspb.String(in), out)
	return out.GetValue(), err
}

// refusedAddr is an address nothing listens on.
func refusedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestFraming(t *testing.T) {
	srv := newFakeServer(t, echo)
	c := newTestClient(t, Config{}, srv.addr)
	ctx := context.Background()

	for i := 0; i < 3; i++ {
		got, err := callString(ctx, c, "getClusterMetrics", fmt.Sprint("hello ", i))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint("hello ", i), got)
	}

	require.Equal(t, 1, srv.numConns())
	srv.mu.Lock()
	require.Equal(t, []byte("hrpc\x09\x00\x00"), srv.preambles[0])
	require.Len(t, srv.contexts, 1)
	require.Equal(t, testProtocol, srv.contexts[0].GetProtocol())
	require.Equal(t, "alice", srv.contexts[0].GetUserInfo().GetEffectiveUser())
	require.Nil(t, srv.contexts[0].GetUserInfo().RealUser)
	srv.mu.Unlock()

	calls := srv.gotCalls()
	require.Len(t, calls, 3)
	ids := map[int32]bool{}
	for _, call := range calls {
		h := call.Header
		require.Equal(t, hadoopcommon.RpcKindProto_RPC_PROTOCOL_BUFFER, h.GetRpcKind())
		require.Equal(t, hadoopcommon.RpcRequestHeaderProto_RPC_FINAL_PACKET, h.GetRpcOp())
		require.GreaterOrEqual(t, h.GetCallId(), int32(0))
		require.Len(t, h.GetClientId(), 16)
		require.Equal(t, c.clientID, h.GetClientId())
		require.Equal(t, int32(0), h.GetRetryCount())
		require.Equal(t, "getClusterMetrics", call.Req.GetMethodName())
		require.Equal(t, testProtocol, call.Req.GetDeclaringClassProtocolName())
		require.Equal(t, uint64(1), call.Req.GetClientProtocolVersion())
		ids[h.GetCallId()] = true
	}
	require.Len(t, ids, 3, "call ids must be distinct")
}

func TestDefaultUserFromEnv(t *testing.T) {
	t.Setenv("HADOOP_USER_NAME", "bob")
	require.Equal(t, "bob", DefaultUser())
	srv := newFakeServer(t, echo)
	c, err := NewClient(Config{Addresses: []string{srv.addr}, Protocol: testProtocol})
	require.NoError(t, err)
	defer c.Close()
	_, err = callString(context.Background(), c, "m", "x")
	require.NoError(t, err)
	require.Equal(t, "bob", srv.contexts[0].GetUserInfo().GetEffectiveUser())
}

func TestConfigErrors(t *testing.T) {
	_, err := NewClient(Config{Protocol: testProtocol})
	require.ErrorContains(t, err, "no addresses")
	_, err = NewClient(Config{Addresses: []string{"x:1"}})
	require.ErrorContains(t, err, "no protocol")
}

func TestConcurrentCallsOutOfOrder(t *testing.T) {
	const n = 40
	var mu sync.Mutex
	var held []*fakeCall
	srv := newFakeServer(t, nil)
	srv.handle = func(fc *fakeConn, call *fakeCall) {
		mu.Lock()
		held = append(held, call)
		if len(held) < n {
			mu.Unlock()
			return
		}
		all := held
		mu.Unlock()
		// Answer in reverse arrival order: the client must match by call id.
		for i := len(all) - 1; i >= 0; i-- {
			echo(fc, all[i])
		}
	}
	c := newTestClient(t, Config{}, srv.addr)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprint("call-", i)
			got, err := callString(context.Background(), c, "m", want)
			if err == nil && got != want {
				err = fmt.Errorf("got %q, want %q", got, want)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, 1, srv.numConns())
}

func TestCancelDiscardsLateReply(t *testing.T) {
	release := make(chan struct{})
	srv := newFakeServer(t, func(fc *fakeConn, call *fakeCall) {
		if call.Req.GetMethodName() == "slow" {
			<-release
			fc.reply(call, wrapperspb.String("late"))
			return
		}
		echo(fc, call)
	})
	c := newTestClient(t, Config{}, srv.addr)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := callString(ctx, c, "slow", "x")
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(start), time.Second)
	var oe *OpError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, "ApplicationClientProtocolPB.slow", oe.Method)

	close(release) // the late reply must be dropped, not delivered to the next call
	for i := 0; i < 5; i++ {
		got, err := callString(context.Background(), c, "fast", fmt.Sprint(i))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint(i), got)
	}
	require.Equal(t, 1, srv.numConns())
}

func TestDeadlines(t *testing.T) {
	srv := newFakeServer(t, func(fc *fakeConn, call *fakeCall) {}) // never answers
	c := newTestClient(t, Config{CallTimeout: 100 * time.Millisecond}, srv.addr)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := callString(ctx, c, "m", "x")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// No deadline on ctx: Config.CallTimeout applies.
	start := time.Now()
	_, err = callString(context.Background(), c, "m", "x")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 2*time.Second)
}

func TestRemoteError(t *testing.T) {
	srv := newFakeServer(t, func(fc *fakeConn, call *fakeCall) {
		if call.Req.GetMethodName() == "getApplicationReport" {
			fc.replyError(call, hadoopcommon.RpcResponseHeaderProto_ERROR,
				"org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException",
				"Application with id 'application_1_0001' doesn't exist in RM.\n\tat org.apache.hadoop.yarn.server.X.y(X.java:1)\n\tat z")
			return
		}
		echo(fc, call)
	})
	c := newTestClient(t, Config{}, srv.addr)
	_, err := callString(context.Background(), c, "getApplicationReport", "x")
	var re *RemoteError
	require.ErrorAs(t, err, &re)
	require.Equal(t, "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException", re.Class)
	require.Equal(t, "Application with id 'application_1_0001' doesn't exist in RM.", re.Message)
	require.True(t, strings.HasPrefix(re.Stack, "\tat org.apache"))
	require.Equal(t, hadoopcommon.RpcResponseHeaderProto_ERROR_APPLICATION, re.Code)
	require.False(t, re.Fatal)
	require.Equal(t, "ipc: ApplicationClientProtocolPB.getApplicationReport on "+srv.addr+
		": org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException: Application with id 'application_1_0001' doesn't exist in RM.", err.Error())
	require.True(t, IsClass(err, "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException"))
	require.True(t, IsClass(fmt.Errorf("wrapped: %w", err), "ApplicationNotFoundException"))
	require.False(t, IsClass(err, "NotFoundException"))
	require.ErrorIs(t, err, &RemoteError{Class: "ApplicationNotFoundException"})
	require.False(t, IsStandby(err))

	// ERROR leaves the connection usable.
	got, err := callString(context.Background(), c, "m", "still here")
	require.NoError(t, err)
	require.Equal(t, "still here", got)
	require.Equal(t, 1, srv.numConns())
}

func TestFatalClosesConnection(t *testing.T) {
	fatalNow := make(chan struct{})
	srv := newFakeServer(t, func(fc *fakeConn, call *fakeCall) {
		switch call.Req.GetMethodName() {
		case "wait":
			<-fatalNow
		case "fatal":
			fc.replyError(call, hadoopcommon.RpcResponseHeaderProto_FATAL,
				"org.apache.hadoop.security.AccessControlException", "nope")
		default:
			echo(fc, call)
		}
	})
	c := newTestClient(t, Config{}, srv.addr)
	defer close(fatalNow)

	waitErr := make(chan error, 1)
	go func() {
		_, err := callString(context.Background(), c, "wait", "x")
		waitErr <- err
	}()
	require.Eventually(t, func() bool { return len(srv.gotCalls()) == 1 }, 2*time.Second, 5*time.Millisecond)

	_, err := callString(context.Background(), c, "fatal", "x")
	var re *RemoteError
	require.ErrorAs(t, err, &re)
	require.True(t, re.Fatal)
	require.Equal(t, "ApplicationClientProtocolPB.fatal", re.Method)
	require.Contains(t, err.Error(), "fatal: org.apache.hadoop.security.AccessControlException: nope")

	// The call in flight on the same connection fails with the same cause.
	err = <-waitErr
	require.ErrorAs(t, err, &re)
	require.True(t, re.Fatal)
	require.Equal(t, "ApplicationClientProtocolPB.wait", re.Method)

	// The next call dials a fresh connection.
	got, err := callString(context.Background(), c, "m", "again")
	require.NoError(t, err)
	require.Equal(t, "again", got)
	require.Equal(t, 2, srv.numConns())
}

func TestOversizeFrames(t *testing.T) {
	srv := newFakeServer(t, func(fc *fakeConn, call *fakeCall) {
		if call.Req.GetMethodName() == "huge" {
			fc.writeRaw(rawFrame(1<<30, []byte{1, 2, 3}))
			return
		}
		if call.Req.GetMethodName() == "negative" {
			fc.writeRaw(rawFrame(0xFFFFFFF0, nil))
			return
		}
		echo(fc, call)
	})
	c := newTestClient(t, Config{MaxFrame: 4096}, srv.addr)

	// A request that does not fit is refused before anything is sent.
	_, err := callString(context.Background(), c, "m", strings.Repeat("x", 5000))
	require.ErrorIs(t, err, ErrFrameTooLarge)
	got, err := callString(context.Background(), c, "m", "small")
	require.NoError(t, err)
	require.Equal(t, "small", got)
	require.Equal(t, 1, srv.numConns())

	for _, m := range []string{"huge", "negative"} {
		_, err = callString(context.Background(), c, m, "x")
		require.ErrorIs(t, err, ErrFrameTooLarge, m)
		require.ErrorIs(t, err, ErrConnectionClosed, m)
	}
	// Each bad frame killed only its connection; the client dials again.
	got, err = callString(context.Background(), c, "m", "fine again")
	require.NoError(t, err)
	require.Equal(t, "fine again", got)
}

func TestMalformedReplyClosesConnection(t *testing.T) {
	srv := newFakeServer(t, func(fc *fakeConn, call *fakeCall) {
		if call.Req.GetMethodName() == "garbage" {
			// Delimited length larger than the frame.
			fc.writeRaw(rawFrame(3, []byte{0x7f, 1, 2}))
			return
		}
		echo(fc, call)
	})
	c := newTestClient(t, Config{}, srv.addr)
	_, err := callString(context.Background(), c, "garbage", "x")
	require.ErrorIs(t, err, ErrConnectionClosed)
	require.ErrorIs(t, err, errMalformed)
	_, err = callString(context.Background(), c, "m", "x")
	require.NoError(t, err)
}

func TestReconnectAfterServerHangsUp(t *testing.T) {
	srv := newFakeServer(t, func(fc *fakeConn, call *fakeCall) {
		if call.Req.GetMethodName() == "hangup" {
			fc.nc.Close()
			return
		}
		echo(fc, call)
	})
	c := newTestClient(t, Config{}, srv.addr)
	_, err := callString(context.Background(), c, "m", "1")
	require.NoError(t, err)

	_, err = callString(context.Background(), c, "hangup", "x")
	require.ErrorIs(t, err, ErrConnectionClosed)
	require.Contains(t, err.Error(), "ipc: call ApplicationClientProtocolPB.hangup on "+srv.addr+": ipc: connection closed")

	got, err := callString(context.Background(), c, "m", "2")
	require.NoError(t, err)
	require.Equal(t, "2", got)
	require.Equal(t, 2, srv.numConns())
}

func TestIdleConnectionClosed(t *testing.T) {
	srv := newFakeServer(t, echo)
	c := newTestClient(t, Config{IdleTimeout: 30 * time.Millisecond}, srv.addr)
	_, err := callString(context.Background(), c, "m", "1")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		cn := c.conns[srv.addr]
		return cn != nil && !cn.alive()
	}, 2*time.Second, 5*time.Millisecond)
	_, err = callString(context.Background(), c, "m", "2")
	require.NoError(t, err)
	require.Equal(t, 2, srv.numConns())
}

func TestRefusedErrorNamesAddress(t *testing.T) {
	addr := refusedAddr(t)
	c := newTestClient(t, Config{Backoff: time.Millisecond}, addr)
	out := &wrapperspb.StringValue{}
	err := c.Call(context.Background(), "getClusterMetrics", &wrapperspb.StringValue{}, out)
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "ipc: call ApplicationClientProtocolPB.getClusterMetrics on "+addr+": dial tcp "), err.Error())
	require.Contains(t, err.Error(), "connection refused")
	var oe *OpError
	require.ErrorAs(t, err, &oe)
	require.Equal(t, addr, oe.Addr)

	_, err = Dial(context.Background(), Config{Addresses: []string{addr}, Protocol: testProtocol, Backoff: time.Millisecond})
	require.ErrorContains(t, err, "ipc: dial "+addr+": dial tcp")
}

func TestFailoverOnRefused(t *testing.T) {
	srv := newFakeServer(t, echo)
	dead := refusedAddr(t)
	c, err := Dial(context.Background(), Config{Addresses: []string{dead, srv.addr}, Protocol: testProtocol})
	require.NoError(t, err)
	defer c.Close()
	require.Equal(t, srv.addr, c.Addr())
	got, err := callString(context.Background(), c, "m", "x")
	require.NoError(t, err)
	require.Equal(t, "x", got)
}

func TestFailoverOnStandby(t *testing.T) {
	standby := newFakeServer(t, func(fc *fakeConn, call *fakeCall) {
		fc.replyError(call, hadoopcommon.RpcResponseHeaderProto_ERROR, StandbyException,
			"Operation category READ is not supported in state standby")
	})
	active := newFakeServer(t, echo)
	c := newTestClient(t, Config{}, standby.addr, active.addr)

	got, err := callString(context.Background(), c, "m", "x")
	require.NoError(t, err)
	require.Equal(t, "x", got)
	require.Equal(t, active.addr, c.Addr())

	// Same call id, retry count bumped, as Hadoop's retry cache expects.
	s, a := standby.gotCalls(), active.gotCalls()
	require.Len(t, s, 1)
	require.Len(t, a, 1)
	require.Equal(t, s[0].Header.GetCallId(), a[0].Header.GetCallId())
	require.Equal(t, int32(0), s[0].Header.GetRetryCount())
	require.Equal(t, int32(1), a[0].Header.GetRetryCount())

	// The client remembers the active address and goes there first.
	_, err = callString(context.Background(), c, "m", "y")
	require.NoError(t, err)
	require.Len(t, standby.gotCalls(), 1)
	require.Len(t, active.gotCalls(), 2)
}

func TestFailoverIsBounded(t *testing.T) {
	standbyHandler := func(fc *fakeConn, call *fakeCall) {
		fc.replyError(call, hadoopcommon.RpcResponseHeaderProto_ERROR, StandbyException, "standby")
	}
	s1 := newFakeServer(t, standbyHandler)
	s2 := newFakeServer(t, standbyHandler)
	c := newTestClient(t, Config{MaxAttempts: 5, Backoff: 10 * time.Millisecond}, s1.addr, s2.addr)
	start := time.Now()
	_, err := callString(context.Background(), c, "m", "x")
	require.True(t, IsStandby(err), "%v", err)
	require.Equal(t, 5, len(s1.gotCalls())+len(s2.gotCalls()))
	// Two pauses between rounds: 10ms then 20ms.
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
}

func TestNoFailoverOnOtherErrors(t *testing.T) {
	bad := newFakeServer(t, func(fc *fakeConn, call *fakeCall) {
		fc.replyError(call, hadoopcommon.RpcResponseHeaderProto_ERROR, "java.io.IOException", "boom")
	})
	good := newFakeServer(t, echo)
	c := newTestClient(t, Config{}, bad.addr, good.addr)
	_, err := callString(context.Background(), c, "m", "x")
	require.True(t, IsClass(err, "java.io.IOException"))
	require.Empty(t, good.gotCalls())
}

func TestClose(t *testing.T) {
	srv := newFakeServer(t, func(fc *fakeConn, call *fakeCall) {})
	c := newTestClient(t, Config{}, srv.addr)
	errc := make(chan error, 1)
	go func() {
		_, err := callString(context.Background(), c, "m", "x")
		errc <- err
	}()
	require.Eventually(t, func() bool { return len(srv.gotCalls()) == 1 }, 2*time.Second, 5*time.Millisecond)
	require.NoError(t, c.Close())
	require.ErrorIs(t, <-errc, ErrClosed)
	_, err := callString(context.Background(), c, "m", "x")
	require.ErrorIs(t, err, ErrClosed)
}

func TestVoidResponse(t *testing.T) {
	srv := newFakeServer(t, func(fc *fakeConn, call *fakeCall) {
		pkt, err := appendPacket(nil, 1<<20, fc.respHeader(call, hadoopcommon.RpcResponseHeaderProto_SUCCESS))
		require.NoError(t, err)
		fc.send(pkt)
	})
	c := newTestClient(t, Config{}, srv.addr)
	out := wrapperspb.String("stale")
	require.NoError(t, c.Call(context.Background(), "m", &wrapperspb.StringValue{}, out))
	require.Equal(t, "", out.GetValue())
}
