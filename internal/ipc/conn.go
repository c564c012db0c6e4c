package ipc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"google.golang.org/protobuf/proto"
)

// aLongTimeAgo is a deadline in the past: setting it unblocks pending I/O.
var aLongTimeAgo = time.Unix(1, 0)

// conn is one established connection to one address. Calls register in
// pending, write under wmu, and are completed by the single reader goroutine.
type conn struct {
	addr     string
	nc       net.Conn
	s        stream
	maxFrame int
	idle     time.Duration

	wmu sync.Mutex // serialises whole packets on s

	mu        sync.Mutex
	pending   map[int32]chan reply
	err       error // set once the connection is dead
	idleTimer *time.Timer
	done      chan struct{}
}

type reply struct {
	hdr  *hadoopcommon.RpcResponseHeaderProto
	body []byte
	err  error
}

// dialConn connects, authenticates and sends the connection context. ctx
// bounds the whole setup, not just the TCP connect.
func dialConn(ctx context.Context, cfg *Config, addr string, clientID []byte) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	d := net.Dialer{KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &conn{
		addr:     addr,
		nc:       nc,
		maxFrame: cfg.MaxFrame,
		idle:     cfg.IdleTimeout,
		pending:  make(map[int32]chan reply),
		done:     make(chan struct{}),
	}
	if err := c.handshake(ctx, cfg, clientID); err != nil {
		nc.Close()
		if cerr := ctxErr(ctx); cerr != nil {
			err = fmt.Errorf("%w (%w)", cerr, err)
		}
		return nil, err
	}
	c.mu.Lock()
	c.armIdleLocked()
	c.mu.Unlock()
	go c.readLoop()
	return c, nil
}

func (c *conn) handshake(ctx context.Context, cfg *Config, clientID []byte) error {
	dl, _ := ctx.Deadline()
	c.nc.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(aLongTimeAgo) })
	defer stop()

	s, method, sess, err := authenticate(ctx, newRawStream(c.nc), cfg, c.addr)
	if err != nil {
		return err
	}
	c.s = s
	if err := c.writeContext(cfg, method, sess, clientID); err != nil {
		return err
	}
	if !stop() {
		return ctx.Err()
	}
	return c.nc.SetDeadline(time.Time{})
}

// effectiveUserSession is a SASL session that authenticated a user by name
// (KERBEROS: the full principal).
type effectiveUserSession interface {
	EffectiveUser() string
}

// authenticate sends the preamble on raw and, with cfg.SASL, runs the SASL
// exchange. It returns the stream every later packet travels on (wrapped
// when the session negotiated a security layer), the auth method and the
// session (nil for SIMPLE).
func authenticate(ctx context.Context, raw *rawStream, cfg *Config, addr string) (stream, string, SaslSession, error) {
	useSASL := len(cfg.SASL) > 0
	if _, err := raw.Write(preamble(useSASL)); err != nil {
		return nil, "", nil, err
	}
	if !useSASL {
		return raw, MethodSimple, nil, nil
	}
	method, sess, err := saslNegotiate(ctx, raw, cfg, addr)
	if err != nil {
		return nil, "", nil, err
	}
	if sess != nil {
		if w := sess.Wrapper(); w != nil {
			return &wrapStream{raw: raw, wrapper: w, maxFrame: cfg.MaxFrame}, method, sess, nil
		}
	}
	return raw, method, sess, nil
}

// connectionContext is the IpcConnectionContextProto (ProtoUtil.makeIpcConnectionContext):
// with token auth the token already names the user, so no user info is sent
// (Hadoop refuses a TOKEN connection whose context claims a user other than
// the token's owner); with Kerberos the effective user is the full principal
// the session authenticated (alice@EXAMPLE.COM), as Hadoop sends ugi.getUserName().
func connectionContext(cfg *Config, method string, sess SaslSession) *hadoopcommon.IpcConnectionContextProto {
	cc := &hadoopcommon.IpcConnectionContextProto{Protocol: proto.String(cfg.Protocol)}
	if method != MethodToken {
		user := cfg.User
		if eu, ok := sess.(effectiveUserSession); ok && method == MethodKerberos {
			user = eu.EffectiveUser()
		}
		cc.UserInfo = &hadoopcommon.UserInformationProto{EffectiveUser: proto.String(user)}
	}
	return cc
}

// writeContext sends the connection context.
func (c *conn) writeContext(cfg *Config, method string, sess SaslSession, clientID []byte) error {
	cc := connectionContext(cfg, method, sess)
	pkt, err := appendPacket(nil, cfg.MaxFrame, requestHeader(connectionContextCallID, invalidRetryCount, clientID), cc)
	if err != nil {
		return err
	}
	if _, err := c.s.Write(pkt); err != nil {
		return err
	}
	return c.s.Flush()
}

// call sends one packet and waits for its reply. errStale means the
// connection was already dead and nothing was sent, so redialing is safe.
func (c *conn) call(ctx context.Context, id int32, pkt []byte) (reply, error) {
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return reply{}, errStale
	}
	if _, dup := c.pending[id]; dup {
		c.mu.Unlock()
		return reply{}, fmt.Errorf("ipc: call id %d already in flight", id)
	}
	c.pending[id] = ch
	if c.idleTimer != nil {
		c.idleTimer.Stop()
	}
	c.mu.Unlock()

	if err := c.write(ctx, pkt); err != nil {
		c.forget(id)
		if cerr := ctxErr(ctx); cerr != nil {
			return reply{}, cerr
		}
		if rerr := c.remoteCause(); rerr != nil {
			return reply{}, rerr
		}
		return reply{}, err
	}
	select {
	case r := <-ch:
		return r, r.err
	case <-ctx.Done():
		// The reply, if it ever comes, finds no pending entry and is dropped.
		c.forget(id)
		return reply{}, ctx.Err()
	}
}

func (c *conn) write(ctx context.Context, pkt []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	dl, _ := ctx.Deadline()
	c.nc.SetWriteDeadline(dl)
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.nc.SetWriteDeadline(aLongTimeAgo)
		close(fired)
	})
	_, err := c.s.Write(pkt)
	if err == nil {
		err = c.s.Flush()
	}
	if !stop() {
		<-fired // so the past deadline cannot land on the next writer
	}
	if err != nil {
		// A server that refuses a connection (e.g. SIMPLE auth on a
		// Kerberized cluster) sends a FATAL reply saying why and hangs up,
		// which can fail this write first: give the reader a moment to
		// record that cause, which call then reports instead of EPIPE.
		select {
		case <-c.done:
		case <-time.After(fatalReplyGrace):
		}
		// A partial packet leaves the stream unusable for everyone.
		c.close(fmt.Errorf("%w: write: %w", ErrConnectionClosed, err))
	}
	return err
}

// fatalReplyGrace bounds the wait for a server's parting FATAL reply after
// a failed write.
const fatalReplyGrace = 300 * time.Millisecond

// remoteCause is the server's own reason for a dead connection, if it sent one.
func (c *conn) remoteCause() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var re *RemoteError
	if errors.As(c.err, &re) {
		return c.err
	}
	return nil
}

func (c *conn) forget(id int32) {
	c.mu.Lock()
	delete(c.pending, id)
	c.armIdleLocked()
	c.mu.Unlock()
}

func (c *conn) armIdleLocked() {
	if c.idle <= 0 || len(c.pending) > 0 || c.err != nil {
		return
	}
	if c.idleTimer == nil {
		c.idleTimer = time.AfterFunc(c.idle, c.closeIfIdle)
		return
	}
	c.idleTimer.Reset(c.idle)
}

func (c *conn) closeIfIdle() {
	c.mu.Lock()
	if len(c.pending) > 0 || c.err != nil {
		c.mu.Unlock()
		return
	}
	// Marked dead under the same lock as the check, so a call registering
	// right now either sees errStale (and redials) or keeps the connection.
	pending := c.markDeadLocked(errIdle)
	c.mu.Unlock()
	c.finish(pending, errIdle)
}

func (c *conn) readLoop() {
	for {
		frame, err := readFrame(c.s, c.maxFrame)
		if err != nil {
			c.close(fmt.Errorf("%w: read: %w", ErrConnectionClosed, err))
			return
		}
		h, body, err := decodeResponse(frame)
		if err != nil {
			c.close(fmt.Errorf("%w: %w", ErrConnectionClosed, err))
			return
		}
		id := int32(h.GetCallId())
		r := reply{hdr: h, body: body}
		if h.GetStatus() != hadoopcommon.RpcResponseHeaderProto_SUCCESS {
			re := newRemoteError(h)
			re.Addr = c.addr
			r.err = re
		}
		c.mu.Lock()
		ch, ok := c.pending[id]
		if ok {
			delete(c.pending, id)
			c.armIdleLocked()
		}
		c.mu.Unlock()
		if ok {
			ch <- r
		}
		if h.GetStatus() == hadoopcommon.RpcResponseHeaderProto_FATAL {
			// The server hangs up after FATAL; the other calls get the same cause.
			c.close(r.err)
			return
		}
	}
}

// close fails every pending call with err and closes the socket; only the
// first cause sticks.
func (c *conn) close(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	pending := c.markDeadLocked(err)
	c.mu.Unlock()
	c.finish(pending, err)
}

func (c *conn) markDeadLocked(err error) map[int32]chan reply {
	c.err = err
	pending := c.pending
	c.pending = nil
	if c.idleTimer != nil {
		c.idleTimer.Stop()
	}
	close(c.done)
	return pending
}

func (c *conn) finish(pending map[int32]chan reply, err error) {
	c.nc.Close()
	for _, ch := range pending {
		ch <- reply{err: err}
	}
}

func (c *conn) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// ctxErr is ctx.Err(), also when the deadline has passed but the context's
// own timer has not fired yet: socket deadlines can expire a moment earlier.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

var (
	errStale = errors.New("ipc: connection already closed")
	errIdle  = fmt.Errorf("%w: idle", ErrConnectionClosed)
)
