package ipc

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// simpleClientID is the client ID the foreign client (colinmarc's, in
// production) puts in its headers.
var simpleClientID = []byte("foreign-client-0")

// dialForeign dials srv and hands the socket to ForeignClientConn with a
// DIGEST-MD5 mechanism over tok.
func dialForeign(t *testing.T, srv *fakeServer, tok security.Token) (net.Conn, error) {
	t.Helper()
	nc, err := net.Dial("tcp", srv.addr)
	require.NoError(t, err)
	cfg := Config{Addresses: []string{srv.addr}, Protocol: testProtocol, User: "alice",
		SASL: []SaslMechanism{TokenAuth(tok)}, RequireSASL: true, DialTimeout: 5 * time.Second, MaxFrame: 1 << 20}
	c, err := ForeignClientConn(context.Background(), nc, cfg, srv.addr)
	if err != nil {
		nc.Close()
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return c, nil
}

// simpleSetup is what a SIMPLE-only client writes first, in two writes as
// colinmarc's does: its preamble (auth protocol NONE), then its connection
// context claiming user.
func simpleSetup(t *testing.T, c net.Conn, protocol, user string) error {
	t.Helper()
	if _, err := c.Write([]byte("hrpc\x09\x00\x00")); err != nil {
		return err
	}
	h := &hadoopcommon.RpcRequestHeaderProto{
		RpcKind:  hadoopcommon.RpcKindProto_RPC_PROTOCOL_BUFFER.Enum(),
		RpcOp:    hadoopcommon.RpcRequestHeaderProto_RPC_FINAL_PACKET.Enum(),
		CallId:   proto.Int32(connectionContextCallID),
		ClientId: simpleClientID,
	}
	cc := &hadoopcommon.IpcConnectionContextProto{Protocol: proto.String(protocol),
		UserInfo: &hadoopcommon.UserInformationProto{EffectiveUser: proto.String(user)}}
	pkt, err := appendPacket(nil, 1<<20, h, cc)
	require.NoError(t, err)
	_, err = c.Write(pkt)
	return err
}

// foreignCall is one call as a SIMPLE-only client makes it: one write, then
// reading the reply frame by frame.
func foreignCall(t *testing.T, c net.Conn, id int32, in string) (string, error) {
	t.Helper()
	rh := &hadoopcommon.RequestHeaderProto{MethodName: proto.String("m"), DeclaringClassProtocolName: proto.String(testProtocol), ClientProtocolVersion: proto.Uint64(1)}
	pkt, err := appendPacket(nil, 1<<20, requestHeader(id, 0, simpleClientID), rh, wrapperspb.String(in))
	require.NoError(t, err)
	if _, err := c.Write(pkt); err != nil {
		return "", err
	}
	frame, err := readFrame(c, 1<<30)
	if err != nil {
		return "", err
	}
	h, body, err := decodeResponse(frame)
	require.NoError(t, err)
	require.Equal(t, id, int32(h.GetCallId()))
	out := &wrapperspb.StringValue{}
	require.NoError(t, decodeBody(body, out))
	return out.GetValue(), nil
}

// TestForeignClientConn: a client that speaks SIMPLE only reaches a
// token-authenticated server through ForeignClientConn, at every
// protection level: the server sees a SASL preamble, the context keeps the
// client's ID and protocol but names no user (the token does), and calls
// (some spanning several WRAP pieces) pass both ways.
func TestForeignClientConn(t *testing.T) {
	for _, qop := range []string{"auth", "auth-int", "auth-conf"} {
		t.Run(qop, func(t *testing.T) {
			srv := newFakeServer(t, echo)
			srv.sasl = (&digestServer{token: testToken(), qops: qop, maxBuf: 4096}).saslServer(t)
			c, err := dialForeign(t, srv, testToken())
			require.NoError(t, err)
			require.NoError(t, simpleSetup(t, c, testProtocol, "mallory"))
			big := strings.Repeat("wrapped payload ", 2000)
			for i, in := range []string{"a", big, "b"} {
				got, err := foreignCall(t, c, int32(i), in)
				require.NoError(t, err)
				require.Equal(t, in, got)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			require.Equal(t, []byte("hrpc\x09\x00\xdf"), srv.preambles[0], "the preamble says SASL")
			require.Len(t, srv.contexts, 1)
			require.Nil(t, srv.contexts[0].GetUserInfo(), "the token names the user, not the client's claim")
			require.Equal(t, testProtocol, srv.contexts[0].GetProtocol())
			require.Equal(t, simpleClientID, srv.calls[0].Header.GetClientId())
		})
	}
}

// TestForeignClientConnByteByByte: the client's setup may arrive in any
// pieces, and its first call in the same write as its context.
func TestForeignClientConnByteByByte(t *testing.T) {
	srv := newFakeServer(t, echo)
	srv.sasl = (&digestServer{token: testToken(), qops: "auth-int"}).saslServer(t)
	c, err := dialForeign(t, srv, testToken())
	require.NoError(t, err)
	var setup bytesConn
	require.NoError(t, simpleSetup(t, &setup, testProtocol, "alice"))
	rh := &hadoopcommon.RequestHeaderProto{MethodName: proto.String("m"), DeclaringClassProtocolName: proto.String(testProtocol), ClientProtocolVersion: proto.Uint64(1)}
	call, err := appendPacket(nil, 1<<20, requestHeader(7, 0, simpleClientID), rh, wrapperspb.String("together"))
	require.NoError(t, err)
	all := append(setup.b, call...)
	for _, b := range all[:len(all)-len(call)-1] {
		_, err := c.Write([]byte{b})
		require.NoError(t, err)
	}
	_, err = c.Write(all[len(all)-len(call)-1:])
	require.NoError(t, err)
	frame, err := readFrame(c, 1<<20)
	require.NoError(t, err)
	h, body, err := decodeResponse(frame)
	require.NoError(t, err)
	require.Equal(t, int32(7), int32(h.GetCallId()))
	out := &wrapperspb.StringValue{}
	require.NoError(t, decodeBody(body, out))
	require.Equal(t, "together", out.GetValue())
}

// bytesConn collects what is written to it.
type bytesConn struct {
	net.Conn
	b []byte
}

func (c *bytesConn) Write(p []byte) (int, error) { c.b = append(c.b, p...); return len(p), nil }

// TestForeignClientConnRefusedToken: a token the server refuses fails
// ForeignClientConn itself, with the server's reason, before the client
// writes anything.
func TestForeignClientConnRefusedToken(t *testing.T) {
	srv := newFakeServer(t, echo)
	srv.sasl = (&digestServer{token: testToken(), qops: "auth"}).saslServer(t)
	bad := testToken()
	bad.Password = []byte("wrong")
	_, err := dialForeign(t, srv, bad)
	require.Error(t, err)
	require.True(t, IsClass(err, "SaslException"), "%v", err)
	require.ErrorContains(t, err, "ipc: "+srv.addr+": fatal: javax.security.sasl.SaslException: DIGEST-MD5: digest response format violation. Mismatched response.")
}

// TestForeignClientConnRefusesOddSetups: what ForeignClientConn cannot
// vouch for is refused before it reaches the server: a client that wants
// to authenticate itself, a context of another protocol, a call where the
// context belongs, a context too long to be one.
func TestForeignClientConnRefusesOddSetups(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(c net.Conn) error
		want  string
	}{
		{"SASL preamble", func(c net.Conn) error { _, err := c.Write([]byte("hrpc\x09\x00\xdf")); return err }, "not a SIMPLE one"},
		{"other protocol", func(c net.Conn) error { return simpleSetup(t, c, "org.example.Other", "alice") }, `for protocol "org.example.Other"`},
		{"call first", func(c net.Conn) error {
			if _, err := c.Write([]byte("hrpc\x09\x00\x00")); err != nil {
				return err
			}
			_, err := foreignCall(t, c, 1, "x")
			return err
		}, "where its connection context (call id -3) belongs"},
		{"huge context", func(c net.Conn) error {
			_, err := c.Write([]byte("hrpc\x09\x00\x00\x7f\xff\xff\xff"))
			return err
		}, "over 65536"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFakeServer(t, echo)
			srv.sasl = (&digestServer{token: testToken(), qops: "auth"}).saslServer(t)
			c, err := dialForeign(t, srv, testToken())
			require.NoError(t, err)
			require.ErrorContains(t, tc.write(c), tc.want)
			require.Empty(t, srv.gotCalls())
		})
	}
}

// TestForeignClientConnBoundsReplies: a reply frame longer than MaxFrame
// is refused before the client would allocate it.
func TestForeignClientConnBoundsReplies(t *testing.T) {
	srv := newFakeServer(t, func(fc *fakeConn, _ *fakeCall) { fc.send(rawFrame(1<<31-1, []byte("x"))) })
	srv.sasl = (&digestServer{token: testToken(), qops: "auth"}).saslServer(t)
	c, err := dialForeign(t, srv, testToken())
	require.NoError(t, err)
	require.NoError(t, simpleSetup(t, c, testProtocol, "alice"))
	_, err = foreignCall(t, c, 1, "x")
	require.ErrorIs(t, err, ErrFrameTooLarge)
}
