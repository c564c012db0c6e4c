package ipc

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
)

// maxForeignContext bounds the connection context packet a foreign client
// writes: a protocol name and a user name, far below this.
const maxForeignContext = 64 << 10

// Stages of a foreign client's connection setup, as ForeignClientConn
// sees its writes.
const (
	foreignPreamble = iota // expecting "hrpc", version, service class, auth NONE
	foreignContext         // expecting the connection context packet
	foreignCalls           // passing packets through
)

// ForeignClientConn authenticates nc, just dialled to addr, with cfg's SASL
// mechanisms (a DIGEST-MD5 delegation token), for another package's Hadoop
// RPC client that speaks SIMPLE or Kerberos only (colinmarc/hdfs's NameNode
// client): that client can then reach a Kerberized server with a token.
// The client is handed the returned conn and sets up its connection as a
// SIMPLE client does. Its preamble (auth protocol NONE) is swallowed: this
// function already sent one saying SASL. Its connection context is
// rewritten as this package writes it after the negotiated method: with a
// token, without the user the client claims, as the token names it. Then
// its packets pass through, wrapped and unwrapped when the session
// negotiated integrity or privacy; every frame the server sends is bounded
// by cfg.MaxFrame before the client reads it. ctx and cfg.DialTimeout bound
// the exchange. cfg needs Addresses and Protocol, as for NewClient.
func ForeignClientConn(ctx context.Context, nc net.Conn, cfg Config, addr string) (net.Conn, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(cfg.SASL) == 0 {
		return nil, errors.New("ipc: a foreign client's connection needs a SASL mechanism")
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	dl, _ := ctx.Deadline()
	if err := nc.SetDeadline(dl); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(aLongTimeAgo) })
	s, method, sess, err := authenticate(ctx, newRawStream(nc), &cfg, addr)
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		var re *RemoteError
		if errors.As(err, &re) {
			re.Addr = addr // the server's refusal: say which server
		}
		if cerr := ctxErr(ctx); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w (%w)", cerr, err)
		}
		return nil, err
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	return &foreignConn{Conn: nc, s: s, cfg: cfg, method: method, sess: sess}, nil
}

// foreignConn is the authenticated connection a foreign client writes and
// reads: deadlines, addresses and Close are the socket's.
type foreignConn struct {
	net.Conn
	s      stream
	cfg    Config
	method string
	sess   SaslSession

	wmu     sync.Mutex
	stage   int
	pending []byte // the client's bytes of the setup stage under way

	rmu sync.Mutex
	in  []byte // the rest of the frame being read
}

func (c *foreignConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.stage == foreignCalls {
		if _, err := c.s.Write(p); err != nil {
			return 0, err
		}
		return len(p), c.s.Flush()
	}
	if len(c.pending)+len(p) > len(preamble(false))+4+maxForeignContext {
		return 0, fmt.Errorf("ipc: the client's connection setup exceeds %d bytes", maxForeignContext)
	}
	c.pending = append(c.pending, p...)
	if err := c.advance(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// advance consumes the client's preamble, then its connection context, as
// far as their bytes have arrived; bytes after the context pass through.
func (c *foreignConn) advance() error {
	if c.stage == foreignPreamble {
		want := preamble(false)
		if len(c.pending) < len(want) {
			return nil
		}
		if !bytes.Equal(c.pending[:len(want)], want) {
			return fmt.Errorf("ipc: the client's connection header is %x, not a SIMPLE one (%x)", c.pending[:len(want)], want)
		}
		c.pending = c.pending[len(want):]
		c.stage = foreignContext
	}
	if len(c.pending) < 4 {
		return nil
	}
	n := binary.BigEndian.Uint32(c.pending)
	if n > maxForeignContext {
		return fmt.Errorf("ipc: the client's connection context is %d bytes, over %d", n, maxForeignContext)
	}
	if len(c.pending) < 4+int(n) {
		return nil
	}
	frame, rest := c.pending[4:4+n], c.pending[4+n:]
	if err := c.sendContext(frame); err != nil {
		return err
	}
	c.stage = foreignCalls
	c.pending = nil
	if len(rest) == 0 {
		return nil
	}
	if _, err := c.s.Write(rest); err != nil {
		return err
	}
	return c.s.Flush()
}

// sendContext replaces the client's connection context by the one this
// package sends for the negotiated method, under the client's own request
// header (its client ID is the one its calls carry).
func (c *foreignConn) sendContext(frame []byte) error {
	h := &hadoopcommon.RpcRequestHeaderProto{}
	rest, err := unmarshalDelimited(frame, h)
	if err != nil {
		return err
	}
	if h.GetCallId() != connectionContextCallID {
		return fmt.Errorf("ipc: the client sent call id %d where its connection context (call id %d) belongs", h.GetCallId(), connectionContextCallID)
	}
	theirs := &hadoopcommon.IpcConnectionContextProto{}
	if rest, err = unmarshalDelimited(rest, theirs); err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("%w: trailing bytes after the connection context", errMalformed)
	}
	if theirs.GetProtocol() != c.cfg.Protocol {
		return fmt.Errorf("ipc: the client's connection is for protocol %q, authenticated for %q", theirs.GetProtocol(), c.cfg.Protocol)
	}
	pkt, err := appendPacket(nil, c.cfg.MaxFrame, h, connectionContext(&c.cfg, c.method, c.sess))
	if err != nil {
		return err
	}
	if _, err := c.s.Write(pkt); err != nil {
		return err
	}
	return c.s.Flush()
}

// Read hands the client the server's frames, each whole and unwrapped,
// after checking its length against cfg.MaxFrame.
func (c *foreignConn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if len(c.in) == 0 {
		frame, err := readFrame(c.s, c.cfg.MaxFrame)
		if err != nil {
			return 0, err
		}
		c.in = binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(frame)), uint32(len(frame)))
		c.in = append(c.in, frame...)
	}
	n := copy(p, c.in)
	c.in = c.in[n:]
	return n, nil
}
