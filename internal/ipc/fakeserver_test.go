package ipc

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// fakeServer is an in-process Hadoop RPC server speaking just enough of the
// protocol to exercise the client: preamble, optional SASL, connection
// context, then calls handed to handle on their own goroutines.
type fakeServer struct {
	t      testing.TB
	ln     net.Listener
	addr   string
	handle func(fc *fakeConn, call *fakeCall)
	// sasl runs after a 0xDF preamble; it returns the wrapper to use, if any,
	// and false to hang up.
	sasl func(fc *fakeConn) (SaslWrapper, bool)

	mu        sync.Mutex
	conns     []*fakeConn
	preambles [][]byte
	contexts  []*hadoopcommon.IpcConnectionContextProto
	calls     []*fakeCall
	wg        sync.WaitGroup
}

type fakeConn struct {
	srv  *fakeServer
	nc   net.Conn
	r    *bufio.Reader
	wmu  sync.Mutex
	wrap SaslWrapper
	in   []byte // unwrapped inbound bytes
}

type fakeCall struct {
	Header *hadoopcommon.RpcRequestHeaderProto
	Req    *hadoopcommon.RequestHeaderProto
	Body   []byte
}

func newFakeServer(t testing.TB, handle func(*fakeConn, *fakeCall)) *fakeServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &fakeServer{t: t, ln: ln, addr: ln.Addr().String(), handle: handle}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.Close)
	return s
}

// echo answers every call with its own StringValue.
func echo(fc *fakeConn, c *fakeCall) {
	v := &wrapperspb.StringValue{}
	if err := proto.Unmarshal(c.Body, v); err != nil {
		fc.replyError(c, hadoopcommon.RpcResponseHeaderProto_ERROR, "java.io.IOException", err.Error())
		return
	}
	fc.reply(c, v)
}

func (s *fakeServer) Close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *fakeServer) numConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *fakeServer) gotCalls() []*fakeCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*fakeCall(nil), s.calls...)
}

func (s *fakeServer) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		fc := &fakeConn{srv: s, nc: nc, r: bufio.NewReader(nc)}
		s.mu.Lock()
		s.conns = append(s.conns, fc)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer nc.Close()
			fc.serve()
		}()
	}
}

func (fc *fakeConn) serve() {
	pre := make([]byte, 7)
	if _, err := io.ReadFull(fc.r, pre); err != nil {
		return
	}
	fc.srv.mu.Lock()
	fc.srv.preambles = append(fc.srv.preambles, pre)
	fc.srv.mu.Unlock()
	if pre[6] == authSASL {
		if fc.srv.sasl == nil {
			return
		}
		var ok bool
		if fc.wrap, ok = fc.srv.sasl(fc); !ok {
			return
		}
	}
	var handlers sync.WaitGroup
	defer handlers.Wait()
	for {
		frame, err := fc.readPacket()
		if err != nil {
			return
		}
		h := &hadoopcommon.RpcRequestHeaderProto{}
		rest, err := unmarshalDelimited(frame, h)
		if err != nil {
			return
		}
		if h.GetCallId() == connectionContextCallID {
			cc := &hadoopcommon.IpcConnectionContextProto{}
			if _, err := unmarshalDelimited(rest, cc); err != nil {
				return
			}
			fc.srv.mu.Lock()
			fc.srv.contexts = append(fc.srv.contexts, cc)
			fc.srv.mu.Unlock()
			continue
		}
		call := &fakeCall{Header: h, Req: &hadoopcommon.RequestHeaderProto{}}
		rest, err = unmarshalDelimited(rest, call.Req)
		if err != nil {
			return
		}
		call.Body, _, err = consumeDelimited(rest)
		if err != nil {
			return
		}
		fc.srv.mu.Lock()
		fc.srv.calls = append(fc.srv.calls, call)
		fc.srv.mu.Unlock()
		handlers.Add(1)
		go func() {
			defer handlers.Done()
			fc.srv.handle(fc, call)
		}()
	}
}

// readPacket reads one inbound packet, unwrapping SASL WRAP packets when a
// security layer was negotiated.
func (fc *fakeConn) readPacket() ([]byte, error) {
	if fc.wrap == nil {
		return readFrame(fc.r, 1<<30)
	}
	return readFrame(readerFunc(fc.readUnwrapped), 1<<30)
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func (fc *fakeConn) readUnwrapped(p []byte) (int, error) {
	for len(fc.in) == 0 {
		msg, err := fc.readSasl()
		if err != nil {
			return 0, err
		}
		require.Equal(fc.srv.t, hadoopcommon.RpcSaslProto_WRAP, msg.GetState())
		fc.in, err = fc.wrap.Unwrap(msg.GetToken())
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, fc.in)
	fc.in = fc.in[n:]
	return n, nil
}

// readSasl reads one raw SASL packet (call id -33).
func (fc *fakeConn) readSasl() (*hadoopcommon.RpcSaslProto, error) {
	frame, err := readFrame(fc.r, 1<<30)
	if err != nil {
		return nil, err
	}
	h := &hadoopcommon.RpcRequestHeaderProto{}
	rest, err := unmarshalDelimited(frame, h)
	if err != nil {
		return nil, err
	}
	require.Equal(fc.srv.t, saslCallID, h.GetCallId())
	m := &hadoopcommon.RpcSaslProto{}
	_, err = unmarshalDelimited(rest, m)
	return m, err
}

func (fc *fakeConn) writeSasl(m *hadoopcommon.RpcSaslProto) {
	id := saslCallID
	h := &hadoopcommon.RpcResponseHeaderProto{
		CallId: proto.Uint32(uint32(id)),
		Status: hadoopcommon.RpcResponseHeaderProto_SUCCESS.Enum(),
	}
	pkt, err := appendPacket(nil, 1<<30, h, m)
	require.NoError(fc.srv.t, err)
	fc.writeRaw(pkt)
}

// writeRaw writes bytes to the socket, bypassing any wrapping.
func (fc *fakeConn) writeRaw(b []byte) {
	fc.wmu.Lock()
	defer fc.wmu.Unlock()
	fc.nc.Write(b)
}

// send writes one outbound packet, wrapped if a security layer is active.
func (fc *fakeConn) send(pkt []byte) {
	if fc.wrap == nil {
		fc.writeRaw(pkt)
		return
	}
	for len(pkt) > 0 {
		n := min(len(pkt), fc.wrap.MaxWrapSize())
		tok, err := fc.wrap.Wrap(pkt[:n])
		require.NoError(fc.srv.t, err)
		fc.writeSasl(&hadoopcommon.RpcSaslProto{State: hadoopcommon.RpcSaslProto_WRAP.Enum(), Token: tok})
		pkt = pkt[n:]
	}
}

func (fc *fakeConn) respHeader(c *fakeCall, st hadoopcommon.RpcResponseHeaderProto_RpcStatusProto) *hadoopcommon.RpcResponseHeaderProto {
	return &hadoopcommon.RpcResponseHeaderProto{
		CallId:              proto.Uint32(uint32(c.Header.GetCallId())),
		Status:              st.Enum(),
		ServerIpcVersionNum: proto.Uint32(9),
		ClientId:            c.Header.GetClientId(),
		RetryCount:          proto.Int32(c.Header.GetRetryCount()),
	}
}

func (fc *fakeConn) reply(c *fakeCall, m proto.Message) {
	pkt, err := appendPacket(nil, 1<<30, fc.respHeader(c, hadoopcommon.RpcResponseHeaderProto_SUCCESS), m)
	require.NoError(fc.srv.t, err)
	fc.send(pkt)
}

func (fc *fakeConn) replyError(c *fakeCall, st hadoopcommon.RpcResponseHeaderProto_RpcStatusProto, class, msg string) {
	h := fc.respHeader(c, st)
	h.ExceptionClassName = proto.String(class)
	h.ErrorMsg = proto.String(msg)
	code := hadoopcommon.RpcResponseHeaderProto_ERROR_APPLICATION
	if st == hadoopcommon.RpcResponseHeaderProto_FATAL {
		code = hadoopcommon.RpcResponseHeaderProto_FATAL_UNKNOWN
	}
	h.ErrorDetail = code.Enum()
	pkt, err := appendPacket(nil, 1<<30, h)
	require.NoError(fc.srv.t, err)
	fc.send(pkt)
	if st == hadoopcommon.RpcResponseHeaderProto_FATAL {
		fc.nc.Close()
	}
}

// rawFrame builds a frame by hand, for malformed and oversize replies.
func rawFrame(length uint32, payload []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, length)
	return append(b, payload...)
}
