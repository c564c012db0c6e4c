package ipc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tfyarn/tfyarn/internal/pause"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"google.golang.org/protobuf/proto"
)

// Client calls one protocol at one logical endpoint (one or more addresses).
// It is safe for concurrent use; calls share one connection per address.
type Client struct {
	cfg      Config
	clientID []byte // 16 random bytes: with the call id, the server's retry-cache key
	short    string // protocol name without its package, for error messages
	nextID   atomic.Uint32

	mu      sync.Mutex
	conns   map[string]*conn
	dialing map[string]chan struct{}
	active  int // index of the address that last worked
	closed  bool
}

// NewClient validates cfg and returns a client; it connects lazily, on the first call.
func NewClient(cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("ipc: client id: %w", err)
	}
	short := cfg.Protocol[strings.LastIndexByte(cfg.Protocol, '.')+1:]
	return &Client{
		cfg:      cfg,
		clientID: id,
		short:    short,
		conns:    make(map[string]*conn),
		dialing:  make(map[string]chan struct{}),
	}, nil
}

// Dial is NewClient followed by connecting to the first reachable address, so
// configuration and reachability problems surface before the first call.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	c, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	err = c.failover(ctx, func(ctx context.Context, addr string, _ int32) error {
		if _, err := c.getConn(ctx, addr); err != nil {
			return &OpError{Op: "dial", Addr: addr, Err: err}
		}
		return nil
	})
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Addr returns the address calls go to first: the one that last worked.
func (c *Client) Addr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg.Addresses[c.active]
}

// Call invokes method on the server and decodes the reply into resp. It fails
// over to the next address on StandbyException or when an address cannot be
// reached. Errors are *RemoteError for server-side exceptions and *OpError
// otherwise; a call whose ctx ends returns an *OpError wrapping ctx.Err().
func (c *Client) Call(ctx context.Context, method string, req, resp proto.Message) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.CallTimeout)
		defer cancel()
	}
	// Hadoop masks its counter the same way: call ids stay non-negative, since
	// negative ids are reserved for the connection context, ping and SASL.
	id := int32((c.nextID.Add(1) - 1) & 0x7fffffff)
	rh := &hadoopcommon.RequestHeaderProto{
		MethodName:                 proto.String(method),
		DeclaringClassProtocolName: proto.String(c.cfg.Protocol),
		ClientProtocolVersion:      proto.Uint64(c.cfg.ProtocolVersion),
	}
	full := c.short + "." + method
	return c.failover(ctx, func(ctx context.Context, addr string, retry int32) error {
		// The same call id with a growing retry count lets an HA server's retry
		// cache recognise a call it may already have executed.
		pkt, err := appendPacket(nil, c.cfg.MaxFrame, requestHeader(id, retry, c.clientID), rh, req)
		if err != nil {
			return &OpError{Op: "call", Method: full, Addr: addr, Err: err}
		}
		r, err := c.roundTrip(ctx, addr, id, pkt)
		if err != nil {
			var re *RemoteError
			if errors.As(err, &re) {
				cp := *re // shared by every call a FATAL failed
				cp.Method, cp.Addr = full, addr
				return &cp
			}
			return &OpError{Op: "call", Method: full, Addr: addr, Err: err}
		}
		if err := decodeBody(r.body, resp); err != nil {
			return &OpError{Op: "call", Method: full, Addr: addr, Err: fmt.Errorf("decode response: %w", err)}
		}
		return nil
	})
}

// roundTrip sends pkt on addr's connection, redialing when the cached
// connection turns out to be dead before anything was sent.
func (c *Client) roundTrip(ctx context.Context, addr string, id int32, pkt []byte) (reply, error) {
	for {
		cn, err := c.getConn(ctx, addr)
		if err != nil {
			return reply{}, err
		}
		r, err := cn.call(ctx, id, pkt)
		if err == errStale {
			c.drop(addr, cn)
			continue
		}
		return r, err
	}
}

// failover runs try over the addresses, starting at the one that last worked,
// for at most MaxAttempts tries, pausing between rounds.
func (c *Client) failover(ctx context.Context, try func(ctx context.Context, addr string, retry int32) error) error {
	c.mu.Lock()
	start := c.active
	c.mu.Unlock()
	n := len(c.cfg.Addresses)
	backoff := c.cfg.Backoff
	var err error
	for attempt := 0; attempt < c.cfg.MaxAttempts; attempt++ {
		if attempt > 0 && attempt%n == 0 {
			if serr := pause.For(ctx, backoff); serr != nil {
				return err
			}
			backoff = min(2*backoff, maxBackoff)
		}
		idx := (start + attempt) % n
		err = try(ctx, c.cfg.Addresses[idx], int32(attempt))
		if err == nil {
			c.mu.Lock()
			c.active = idx
			c.mu.Unlock()
			return nil
		}
		if ctxErr(ctx) != nil || !shouldFailover(err) {
			return err
		}
	}
	return err
}

// shouldFailover: the server said it is not active, or the address could not
// be reached at all. Either way the call was not executed, so retrying is safe.
func shouldFailover(err error) bool {
	var de *dialError
	return IsStandby(err) || errors.As(err, &de)
}

// dialError marks a failure to establish a connection (as opposed to one that
// broke while a call was in flight).
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// getConn returns addr's live connection, dialing it if needed. Concurrent
// callers share one dial.
func (c *Client) getConn(ctx context.Context, addr string) (*conn, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		if cn := c.conns[addr]; cn != nil && cn.alive() {
			c.mu.Unlock()
			return cn, nil
		}
		if wait := c.dialing[addr]; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		c.dialing[addr] = done
		c.mu.Unlock()

		cn, err := dialConn(ctx, &c.cfg, addr, c.clientID)

		c.mu.Lock()
		delete(c.dialing, addr)
		close(done)
		if err == nil && c.closed {
			cn.close(ErrClosed)
			err = ErrClosed
		} else if err == nil {
			c.conns[addr] = cn
		}
		c.mu.Unlock()
		if err != nil {
			var re *RemoteError
			if ctxErr(ctx) != nil || errors.As(err, &re) || err == ErrClosed {
				return nil, err
			}
			return nil, &dialError{err}
		}
		return cn, nil
	}
}

func (c *Client) drop(addr string, cn *conn) {
	c.mu.Lock()
	if c.conns[addr] == cn {
		delete(c.conns, addr)
	}
	c.mu.Unlock()
}

// Close closes all connections; calls in flight fail with ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	conns := c.conns
	c.conns = map[string]*conn{}
	c.mu.Unlock()
	for _, cn := range conns {
		cn.close(ErrClosed)
	}
	return nil
}
