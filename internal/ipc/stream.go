package ipc

import (
	"bufio"
	"fmt"
	"net"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
)

// stream is the byte stream the framing runs over: the socket itself, or a
// SASL wrapping layer (auth-int/auth-conf) inserted between framing and socket.
type stream interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	Flush() error
}

type rawStream struct {
	r *bufio.Reader
	w *bufio.Writer
}

// rawBufferSize is each direction's buffer on a connection, the size of
// Hadoop's own client's (BufferedInputStream/BufferedOutputStream defaults).
// A connection lives as long as its client: the AM keeps one to every
// NodeManager its tasks run on, so 64 KiB a direction cost it 128 KiB per
// node; frames larger than the buffer pass through it all the same.
const rawBufferSize = 8 << 10

func newRawStream(nc net.Conn) *rawStream {
	return &rawStream{r: bufio.NewReaderSize(nc, rawBufferSize), w: bufio.NewWriterSize(nc, rawBufferSize)}
}

func (s *rawStream) Read(p []byte) (int, error)  { return s.r.Read(p) }
func (s *rawStream) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s *rawStream) Flush() error                { return s.w.Flush() }

// wrapStream carries the inner byte stream inside RpcSaslProto{WRAP} packets,
// as Hadoop's SaslRpcClient.WrappedInputStream/WrappedOutputStream do: the
// wrapped bytes are whole inner packets, 4-byte lengths included.
type wrapStream struct {
	raw      stream
	wrapper  SaslWrapper
	maxFrame int
	in       []byte
}

func (s *wrapStream) Read(p []byte) (int, error) {
	for len(s.in) == 0 {
		frame, err := readFrame(s.raw, s.maxFrame)
		if err != nil {
			return 0, err
		}
		h, rest, err := decodeResponse(frame)
		if err != nil {
			return 0, err
		}
		if h.GetStatus() != hadoopcommon.RpcResponseHeaderProto_SUCCESS {
			return 0, newRemoteError(h)
		}
		if int32(h.GetCallId()) != saslCallID {
			return 0, fmt.Errorf("%w: server sent a non-wrapped response (call id %d)", errMalformed, int32(h.GetCallId()))
		}
		msg := &hadoopcommon.RpcSaslProto{}
		if _, err := unmarshalDelimited(rest, msg); err != nil {
			return 0, err
		}
		if msg.GetState() != hadoopcommon.RpcSaslProto_WRAP {
			return 0, fmt.Errorf("%w: expected SASL WRAP, got %v", errMalformed, msg.GetState())
		}
		if s.in, err = s.wrapper.Unwrap(msg.GetToken()); err != nil {
			return 0, fmt.Errorf("ipc: sasl unwrap: %w", err)
		}
	}
	n := copy(p, s.in)
	s.in = s.in[n:]
	return n, nil
}

func (s *wrapStream) Write(p []byte) (int, error) {
	chunk := s.wrapper.MaxWrapSize()
	if chunk <= 0 {
		chunk = len(p)
	}
	written := 0
	for written < len(p) {
		piece := p[written:min(len(p), written+chunk)]
		tok, err := s.wrapper.Wrap(piece)
		if err != nil {
			return written, fmt.Errorf("ipc: sasl wrap: %w", err)
		}
		pkt, err := appendPacket(nil, s.maxFrame, saslHeader(), &hadoopcommon.RpcSaslProto{
			State: hadoopcommon.RpcSaslProto_WRAP.Enum(),
			Token: tok,
		})
		if err != nil {
			return written, err
		}
		if _, err := s.raw.Write(pkt); err != nil {
			return written, err
		}
		written += len(piece)
	}
	return written, nil
}

func (s *wrapStream) Flush() error { return s.raw.Flush() }
