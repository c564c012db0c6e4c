// Package connlimit bounds what strangers can hold of a server: a
// Listener keeps at most a fixed number of connections whose peer has not
// authenticated, closing the oldest of them to make room for a new one,
// so a flood of idle or slow connections costs the server a bounded
// amount of memory and never locks out a peer that authenticates at once.
//
// A connection leaves that pool when the server, having authenticated a
// request on it, calls Trust with the request's context (the http.Server
// must use ConnContext). Trusted connections are bounded separately.
package connlimit

import (
	"container/list"
	"context"
	"net"
	"sync"
	"sync/atomic"
)

// Listener wraps a net.Listener with the two bounds.
type Listener struct {
	net.Listener
	maxUntrusted, maxTrusted int

	mu        sync.Mutex
	untrusted list.List // of *Conn, oldest first
	trusted   int
	evicted   atomic.Int64
}

// NewListener bounds ln's connections: at most maxUntrusted not yet
// trusted (at least 1), at most maxTrusted trusted; a connection Trust
// cannot take in stays untrusted.
func NewListener(ln net.Listener, maxUntrusted, maxTrusted int) *Listener {
	return &Listener{Listener: ln, maxUntrusted: max(maxUntrusted, 1), maxTrusted: maxTrusted}
}

// Accept returns the next connection. When the untrusted pool is full its
// oldest connection is closed first: past the bound, the newest stranger
// wins over the one that has been idling longest, which is what lets a
// launcher in during a flood (it authenticates within a round trip, long
// before it becomes the oldest).
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &Conn{Conn: c, l: l}
	var victim *Conn
	l.mu.Lock()
	if l.untrusted.Len() >= l.maxUntrusted {
		victim = l.untrusted.Remove(l.untrusted.Front()).(*Conn)
		victim.elem = nil
	}
	tc.elem = l.untrusted.PushBack(tc)
	l.mu.Unlock()
	if victim != nil {
		l.evicted.Add(1)
		_ = victim.Conn.Close()
	}
	return tc, nil
}

// Evicted counts the untrusted connections closed to make room.
func (l *Listener) Evicted() int64 { return l.evicted.Load() }

// Counts returns how many untrusted and trusted connections are open.
func (l *Listener) Counts() (untrusted, trusted int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.untrusted.Len(), l.trusted
}

func (l *Listener) trust(c *Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case c.trusted:
		return true
	case c.elem == nil, l.trusted >= l.maxTrusted: // closed or evicted; or no room
		return false
	}
	l.untrusted.Remove(c.elem)
	c.elem, c.trusted = nil, true
	l.trusted++
	return true
}

func (l *Listener) forget(c *Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.elem != nil {
		l.untrusted.Remove(c.elem)
		c.elem = nil
	}
	if c.trusted {
		c.trusted = false
		l.trusted--
	}
}

// Conn is a connection the Listener accepted.
type Conn struct {
	net.Conn
	l         *Listener
	elem      *list.Element // in l.untrusted; nil once trusted, evicted or closed (under l.mu)
	trusted   bool          // under l.mu
	closeOnce sync.Once
}

// Close closes the connection and frees its place.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() { c.l.forget(c) })
	return c.Conn.Close()
}

type ctxKey struct{}

// ConnContext is an http.Server's ConnContext: it lets Trust find the
// connection a request came on.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*Conn); ok {
		return context.WithValue(ctx, ctxKey{}, tc)
	}
	return ctx
}

// Trust moves the connection that carried ctx's request out of the
// untrusted pool, for a server that has just authenticated the request.
// It reports whether the connection is trusted now; a request that did not
// come through a Listener is not (and nothing happens).
func Trust(ctx context.Context) bool {
	tc, ok := ctx.Value(ctxKey{}).(*Conn)
	return ok && tc.l.trust(tc)
}
