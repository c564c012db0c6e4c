package ipc

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"google.golang.org/protobuf/proto"
)

// fakeMech is a toy TOKEN/DIGEST-MD5 stand-in: it answers challenge "cN"
// with "rN" and is complete after seeing "c2".
type fakeMech struct {
	method, mech string
	noCreds      bool
	wrapper      SaslWrapper
	offers       []SaslOffer
}

func (m *fakeMech) Method() string    { return m.method }
func (m *fakeMech) Mechanism() string { return m.mech }
func (m *fakeMech) Start(_ context.Context, o SaslOffer) (SaslSession, error) {
	m.offers = append(m.offers, o)
	if m.noCreds {
		return nil, ErrNoCredentials
	}
	return &fakeSession{wrapper: m.wrapper}, nil
}

type fakeSession struct {
	done    bool
	wrapper SaslWrapper
}

func (s *fakeSession) Step(ch []byte) ([]byte, error) {
	switch string(ch) {
	case "c1":
		return []byte("r1"), nil
	case "c2":
		s.done = true
		return []byte("r2"), nil
	case "final":
		return nil, nil
	}
	return nil, errors.New("bad challenge " + string(ch))
}
func (s *fakeSession) Complete() bool       { return s.done }
func (s *fakeSession) Wrapper() SaslWrapper { return s.wrapper }

// xorWrapper is a toy security layer with a small buffer, so big packets span
// several WRAP messages.
type xorWrapper struct{ max int }

func (w xorWrapper) Wrap(p []byte) ([]byte, error) {
	if len(p) > w.max {
		return nil, errors.New("too big to wrap")
	}
	return xor(p), nil
}
func (w xorWrapper) Unwrap(p []byte) ([]byte, error) { return xor(p), nil }
func (w xorWrapper) MaxWrapSize() int                { return w.max }

func xor(p []byte) []byte {
	out := make([]byte, len(p))
	for i, b := range p {
		out[i] = b ^ 0x5a
	}
	return out
}

var tokenOffer = &hadoopcommon.RpcSaslProto_SaslAuth{
	Method:    proto.String(MethodToken),
	Mechanism: proto.String("DIGEST-MD5"),
	Protocol:  proto.String(""),
	ServerId:  proto.String("default"),
	Challenge: []byte("c1"),
}

// offer reads the client's NEGOTIATE and answers with a NEGOTIATE offering auths.
func offer(t *testing.T, fc *fakeConn, auths ...*hadoopcommon.RpcSaslProto_SaslAuth) {
	msg, err := fc.readSasl()
	require.NoError(t, err)
	require.Equal(t, hadoopcommon.RpcSaslProto_NEGOTIATE, msg.GetState())
	fc.writeSasl(&hadoopcommon.RpcSaslProto{State: hadoopcommon.RpcSaslProto_NEGOTIATE.Enum(), Auths: auths})
}

// tokenServer negotiates like Hadoop's server does for TOKEN auth and checks
// each client message on the way.
func tokenServer(t *testing.T, wrap SaslWrapper) func(fc *fakeConn) (SaslWrapper, bool) {
	return func(fc *fakeConn) (SaslWrapper, bool) {
		offer(t, fc,
			&hadoopcommon.RpcSaslProto_SaslAuth{Method: proto.String(MethodKerberos), Mechanism: proto.String("GSSAPI"), Protocol: proto.String("rm"), ServerId: proto.String("localhost")},
			tokenOffer)
		msg, err := fc.readSasl()
		require.NoError(t, err)
		require.Equal(t, hadoopcommon.RpcSaslProto_INITIATE, msg.GetState())
		require.Equal(t, "r1", string(msg.GetToken()))
		require.Len(t, msg.GetAuths(), 1)
		echo := proto.Clone(tokenOffer).(*hadoopcommon.RpcSaslProto_SaslAuth)
		echo.Challenge = nil
		require.True(t, proto.Equal(echo, msg.GetAuths()[0]), "client must echo the offer minus the challenge")

		fc.writeSasl(&hadoopcommon.RpcSaslProto{State: hadoopcommon.RpcSaslProto_CHALLENGE.Enum(), Token: []byte("c2")})
		msg, err = fc.readSasl()
		require.NoError(t, err)
		require.Equal(t, hadoopcommon.RpcSaslProto_RESPONSE, msg.GetState())
		require.Equal(t, "r2", string(msg.GetToken()))
		fc.writeSasl(&hadoopcommon.RpcSaslProto{State: hadoopcommon.RpcSaslProto_SUCCESS.Enum(), Token: []byte("final")})
		return wrap, true
	}
}

func TestSaslTokenNegotiation(t *testing.T) {
	srv := newFakeServer(t, echo)
	srv.sasl = tokenServer(t, nil)
	krb := &fakeMech{method: MethodKerberos, mech: "GSSAPI", noCreds: true}
	tok := &fakeMech{method: MethodToken, mech: "DIGEST-MD5"}
	c := newTestClient(t, Config{SASL: []SaslMechanism{krb, tok}}, srv.addr)

	got, err := callString(context.Background(), c, "allocate", "hi")
	require.NoError(t, err)
	require.Equal(t, "hi", got)

	require.Equal(t, []byte("hrpc\x09\x00\xdf"), srv.preambles[0])
	require.Len(t, krb.offers, 1, "kerberos was offered first and declined for lack of credentials")
	require.Equal(t, SaslOffer{Method: MethodToken, Mechanism: "DIGEST-MD5", ServerID: "default", Challenge: []byte("c1"), Addr: srv.addr}, tok.offers[0],
		"the offer carries the address dialled")
	// Token auth: the connection context names no user.
	require.Nil(t, srv.contexts[0].GetUserInfo())
	require.Equal(t, testProtocol, srv.contexts[0].GetProtocol())
}

func TestSaslWrapping(t *testing.T) {
	w := xorWrapper{max: 16}
	srv := newFakeServer(t, echo)
	srv.sasl = tokenServer(t, w)
	tok := &fakeMech{method: MethodToken, mech: "DIGEST-MD5", wrapper: w}
	c := newTestClient(t, Config{SASL: []SaslMechanism{tok}}, srv.addr)

	big := strings.Repeat("wrapped payload ", 100)
	for _, in := range []string{"a", big} {
		got, err := callString(context.Background(), c, "m", in)
		require.NoError(t, err)
		require.Equal(t, in, got)
	}
}

func TestSaslServerSwitchesToSimple(t *testing.T) {
	srv := newFakeServer(t, echo)
	srv.sasl = func(fc *fakeConn) (SaslWrapper, bool) {
		_, err := fc.readSasl()
		require.NoError(t, err)
		fc.writeSasl(&hadoopcommon.RpcSaslProto{State: hadoopcommon.RpcSaslProto_SUCCESS.Enum()})
		return nil, true
	}
	tok := &fakeMech{method: MethodToken, mech: "DIGEST-MD5"}
	c := newTestClient(t, Config{SASL: []SaslMechanism{tok}}, srv.addr)
	_, err := callString(context.Background(), c, "m", "x")
	require.NoError(t, err)
	require.Equal(t, "alice", srv.contexts[0].GetUserInfo().GetEffectiveUser())

	strict := newTestClient(t, Config{SASL: []SaslMechanism{tok}, RequireSASL: true}, srv.addr)
	_, err = callString(context.Background(), strict, "m", "x")
	require.ErrorIs(t, err, ErrServerSimple)
}

// A client configured for Kerberos meets an insecure server, which offers
// TOKEN and SIMPLE: that is ErrServerSimple, which the CLI explains.
func TestSaslStrictClientOfferedSimple(t *testing.T) {
	srv := newFakeServer(t, echo)
	srv.sasl = func(fc *fakeConn) (SaslWrapper, bool) {
		offer(t, fc,
			&hadoopcommon.RpcSaslProto_SaslAuth{Method: proto.String(MethodToken), Mechanism: proto.String("DIGEST-MD5"), Protocol: proto.String(""), ServerId: proto.String("default")},
			&hadoopcommon.RpcSaslProto_SaslAuth{Method: proto.String(MethodSimple), Mechanism: proto.String("")})
		fc.readSasl() // the client hangs up instead
		return nil, false
	}
	krb := &fakeMech{method: MethodKerberos, mech: "GSSAPI"}
	c := newTestClient(t, Config{SASL: []SaslMechanism{krb}, RequireSASL: true, MaxAttempts: 1}, srv.addr)
	_, err := callString(context.Background(), c, "m", "x")
	require.ErrorIs(t, err, ErrServerSimple)
	require.ErrorContains(t, err, "[TOKEN SIMPLE]")
}

// A Kerberized server refuses a SIMPLE client with a FATAL reply and hangs
// up at once; whichever of the client's writes fails first, the caller
// reads the server's reason, not EPIPE.
func TestServerReasonBeatsBrokenPipe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func(nc net.Conn) {
				defer nc.Close()
				if _, err := io.ReadFull(nc, make([]byte, 7)); err != nil { // hrpc, version, class, auth
					return
				}
				h := &hadoopcommon.RpcResponseHeaderProto{
					CallId:             proto.Uint32(uint32(int64(connectionContextCallID) & 0xffffffff)),
					Status:             hadoopcommon.RpcResponseHeaderProto_FATAL.Enum(),
					ExceptionClassName: proto.String("org.apache.hadoop.security.AccessControlException"),
					ErrorMsg:           proto.String("SIMPLE authentication is not enabled.  Available:[TOKEN, KERBEROS]"),
					ErrorDetail:        hadoopcommon.RpcResponseHeaderProto_FATAL_UNAUTHORIZED.Enum(),
				}
				// Hadoop answers once the client's call is on its way; the
				// call's large payload then meets a closed socket.
				time.Sleep(20 * time.Millisecond)
				pkt, _ := appendPacket(nil, 1<<20, h)
				nc.Write(pkt)
			}(nc)
		}
	}()
	for i := 0; i < 20; i++ {
		c, err := NewClient(Config{Addresses: []string{ln.Addr().String()}, Protocol: "p", MaxAttempts: 1})
		require.NoError(t, err)
		payload := strings.Repeat("x", 8<<20) // far larger than the socket buffers
		_, err = callString(context.Background(), c, "m", payload)
		c.Close()
		require.True(t, IsClass(err, "AccessControlException"), "attempt %d: %v", i, err)
		require.ErrorContains(t, err, "SIMPLE authentication is not enabled")
	}
}

func TestSaslOfferedSimple(t *testing.T) {
	srv := newFakeServer(t, echo)
	srv.sasl = func(fc *fakeConn) (SaslWrapper, bool) {
		offer(t, fc, &hadoopcommon.RpcSaslProto_SaslAuth{Method: proto.String(MethodSimple), Mechanism: proto.String("")})
		msg, err := fc.readSasl()
		require.NoError(t, err)
		require.Equal(t, hadoopcommon.RpcSaslProto_INITIATE, msg.GetState())
		require.Equal(t, MethodSimple, msg.GetAuths()[0].GetMethod())
		return nil, true // no SUCCESS: Hadoop's client does not wait for one
	}
	c := newTestClient(t, Config{SASL: []SaslMechanism{&fakeMech{method: MethodToken, mech: "DIGEST-MD5"}}}, srv.addr)
	_, err := callString(context.Background(), c, "m", "x")
	require.NoError(t, err)
}

func TestSaslRejected(t *testing.T) {
	other := newFakeServer(t, echo)
	srv := newFakeServer(t, echo)
	srv.sasl = func(fc *fakeConn) (SaslWrapper, bool) {
		_, err := fc.readSasl()
		require.NoError(t, err)
		id := saslCallID
		h := &hadoopcommon.RpcResponseHeaderProto{
			CallId:             proto.Uint32(uint32(id)),
			Status:             hadoopcommon.RpcResponseHeaderProto_FATAL.Enum(),
			ExceptionClassName: proto.String("org.apache.hadoop.security.AccessControlException"),
			ErrorMsg:           proto.String("SIMPLE authentication is not enabled.  Available:[TOKEN]"),
			ErrorDetail:        hadoopcommon.RpcResponseHeaderProto_FATAL_UNAUTHORIZED.Enum(),
		}
		pkt, err := appendPacket(nil, 1<<20, h)
		require.NoError(t, err)
		fc.writeRaw(pkt)
		return nil, false
	}
	c := newTestClient(t, Config{SASL: []SaslMechanism{&fakeMech{method: MethodToken, mech: "DIGEST-MD5"}}}, srv.addr, other.addr)
	_, err := callString(context.Background(), c, "m", "x")
	require.True(t, IsClass(err, "AccessControlException"), "%v", err)
	require.Empty(t, other.gotCalls(), "authentication failures must not fail over")
}

func TestSaslNoUsableMechanism(t *testing.T) {
	srv := newFakeServer(t, echo)
	srv.sasl = func(fc *fakeConn) (SaslWrapper, bool) {
		offer(t, fc, &hadoopcommon.RpcSaslProto_SaslAuth{Method: proto.String(MethodKerberos), Mechanism: proto.String("GSSAPI")})
		fc.readSasl() // the client hangs up instead
		return nil, false
	}
	c := newTestClient(t, Config{SASL: []SaslMechanism{&fakeMech{method: MethodToken, mech: "DIGEST-MD5"}}, MaxAttempts: 1}, srv.addr)
	_, err := callString(context.Background(), c, "m", "x")
	require.ErrorContains(t, err, "cannot authenticate via [KERBEROS]")
}

func TestDialHonoursContext(t *testing.T) {
	// A server that accepts and then never answers the SASL negotiation.
	srv := newFakeServer(t, echo)
	block := make(chan struct{})
	defer close(block)
	srv.sasl = func(fc *fakeConn) (SaslWrapper, bool) {
		<-block
		return nil, false
	}
	c := newTestClient(t, Config{SASL: []SaslMechanism{&fakeMech{method: MethodToken, mech: "DIGEST-MD5"}}}, srv.addr)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := callString(ctx, c, "m", "x")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), time.Second)

	// Config.DialTimeout bounds the handshake even under a longer ctx.
	c2 := newTestClient(t, Config{SASL: []SaslMechanism{&fakeMech{method: MethodToken, mech: "DIGEST-MD5"}}, DialTimeout: 100 * time.Millisecond, MaxAttempts: 1}, srv.addr)
	start = time.Now()
	_, err = callString(context.Background(), c2, "m", "x")
	require.Error(t, err)
	require.Less(t, time.Since(start), time.Second)
}
