package torchstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/refusals"
)

// writeTimeout bounds one reply: a client that does not read loses its
// connection instead of holding the server.
const writeTimeout = 30 * time.Second

// DefaultRequestTimeout bounds the reading of one request from its first
// byte (and of the validation from the connection's start). Between
// requests a connection may stay silent as long as it likes: torch's
// clients hold a connection for the job's life and block in WAIT for the
// rendezvous' timeout, sending nothing meanwhile.
const DefaultRequestTimeout = 30 * time.Second

// MaxInFlightBytes bounds what all connections together may have allocated
// for requests not yet carried out (keys and values being read). It holds
// a COMPARE_SET of two values of MaxValueLen with room to spare.
const MaxInFlightBytes = 64 << 20

// Server is one store. The zero value is not usable; call New.
type Server struct {
	mu       sync.Mutex
	data     map[string][]byte
	bytes    int
	waiters  map[string][]*conn // key -> connections waiting for it
	conns    map[*conn]bool
	inFlight *budget
	// RequestTimeout bounds the reading of one request (New sets
	// DefaultRequestTimeout): a client that sends part of a request and
	// stops loses its connection.
	RequestTimeout time.Duration
	// Logf, when set, hears why a connection was dropped: the first few,
	// then a count a minute (package refusals).
	Logf    func(format string, args ...any)
	refused *refusals.Log
}

// New returns an empty store.
func New() *Server {
	s := &Server{
		data: map[string][]byte{}, waiters: map[string][]*conn{}, conns: map[*conn]bool{},
		inFlight: newBudget(MaxInFlightBytes), RequestTimeout: DefaultRequestTimeout,
	}
	s.refused = refusals.New("torch store", s.logf)
	return s
}

type conn struct {
	nc      net.Conn
	wmu     sync.Mutex
	pending int      // keys of its WAIT not yet set (server.mu)
	waitFor []string // keys of its WAIT (server.mu)

	// The request being read: its deadline and the bytes it took from
	// the server's budget (serveConn's goroutine only).
	deadline time.Time
	held     int
}

func (c *conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := c.nc.Write(b)
	return err
}

// Serve accepts connections on ln until ctx ends, then closes ln and every
// connection. It returns nil when ctx ended, else why accepting failed.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	stop := context.AfterFunc(ctx, func() {
		_ = ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			_ = c.nc.Close()
		}
		s.mu.Unlock()
	})
	defer stop()
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("torch store: accepting on %s: %w", ln.Addr(), err)
		}
		c := &conn{nc: nc}
		s.mu.Lock()
		full := len(s.conns) >= MaxConns
		if !full {
			s.conns[c] = true
		}
		s.mu.Unlock()
		if full || ctx.Err() != nil {
			_ = nc.Close()
			continue
		}
		go s.serveConn(c)
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// drop logs why a connection is dropped, clipped and counted.
func (s *Server) drop(c *conn, reason string) {
	s.refused.Refuse(refusals.Refusal{Peer: c.nc.RemoteAddr().String(), Reason: reason})
}

func (s *Server) serveConn(c *conn) {
	defer func() {
		_ = c.nc.Close()
		s.giveBack(c)
		s.mu.Lock()
		delete(s.conns, c)
		s.clearWaitLocked(c)
		s.mu.Unlock()
	}()
	r := bufio.NewReader(c.nc)
	s.startRequest(c)
	first, err := ReadRequest(r, s.grantFor(c))
	s.giveBack(c)
	if err != nil || first.Cmd != CmdValidate || uint32(first.Int) != ValidationMagic {
		s.drop(c, "not a TCPStore client (no validation)")
		return
	}
	for {
		// No deadline until a request's first byte: a client blocked
		// in WAIT, or between requests, is not idle.
		_ = c.nc.SetReadDeadline(time.Time{})
		if _, err := r.Peek(1); err != nil {
			if !isClosed(err) {
				s.drop(c, err.Error())
			}
			return
		}
		s.startRequest(c)
		q, err := ReadRequest(r, s.grantFor(c))
		if err != nil {
			s.drop(c, requestError(err, s.RequestTimeout).Error())
			return
		}
		err = s.handle(c, q)
		s.giveBack(c)
		if err != nil {
			s.drop(c, err.Error())
			return
		}
	}
}

// startRequest gives c's next request its deadline.
func (s *Server) startRequest(c *conn) {
	c.deadline = time.Now().Add(s.RequestTimeout)
	_ = c.nc.SetReadDeadline(c.deadline)
}

// grantFor takes what c's request allocates from the server's budget,
// waiting at most until the request's deadline.
func (s *Server) grantFor(c *conn) Grant {
	return func(n int) error {
		if err := s.inFlight.take(n, c.deadline); err != nil {
			return err
		}
		c.held += n
		return nil
	}
}

// giveBack returns to the budget what c's request took.
func (s *Server) giveBack(c *conn) {
	s.inFlight.give(c.held)
	c.held = 0
}

// requestError names a read deadline for what it is.
func requestError(err error, timeout time.Duration) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("a request not received within %v of its first byte; dropped", timeout)
	}
	return err
}

func isClosed(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF)
}

// wake is a reply owed to another connection, written after the store's
// lock is released.
type wake struct {
	c   *conn
	msg []byte
}

// handle answers one request of c: its reply to c, and the replies it owes
// other connections waiting for the keys it set (written after the lock is
// released).
func (s *Server) handle(c *conn, q Request) error {
	var wakes []wake
	reply, err := func() ([]byte, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.applyLocked(c, q, &wakes)
	}()
	for _, w := range wakes {
		if w.c.write(w.msg) != nil {
			_ = w.c.nc.Close()
		}
	}
	if err != nil {
		return err
	}
	if reply != nil {
		return c.write(reply)
	}
	return nil
}

// applyLocked carries out request q of c, with s.mu held: the reply to c
// (nil for none), the replies owed to waiting connections added to wakes.
func (s *Server) applyLocked(c *conn, q Request, wakes *[]wake) ([]byte, error) {
	switch q.Cmd {
	case CmdValidate:
		// A repeated validation is harmless.
		return nil, nil
	case CmdPing:
		return appendU32(nil, uint32(q.Int)), nil
	case CmdSet:
		return nil, s.setLocked(q.Keys[0], q.Values[0], wakes)
	case CmdMultiSet:
		for i, k := range q.Keys {
			if err := s.setLocked(k, q.Values[i], wakes); err != nil {
				return nil, err
			}
		}
		return nil, nil
	case CmdAppend:
		v := append(append([]byte(nil), s.data[q.Keys[0]]...), q.Values[0]...)
		if len(v) > MaxValueLen {
			return nil, fmt.Errorf("append to %q: value over %d bytes", q.Keys[0], MaxValueLen)
		}
		return nil, s.setLocked(q.Keys[0], v, wakes)
	case CmdCompareSet:
		return s.compareSetLocked(q.Keys[0], q.Values[0], q.Values[1], wakes)
	case CmdGet:
		v, ok := s.data[q.Keys[0]]
		if !ok {
			return nil, fmt.Errorf("get of %q, which is not set", q.Keys[0])
		}
		return appendBytes(nil, v), nil
	case CmdMultiGet:
		return s.multiGetLocked(q.Keys)
	case CmdAdd:
		return s.addLocked(q.Keys[0], q.Int, wakes)
	case CmdCheck:
		return s.checkLocked(q.Keys), nil
	case CmdWait:
		return s.waitLocked(c, q.Keys), nil
	case CmdCancelWait:
		s.clearWaitLocked(c)
		return []byte{waitCanceled}, nil
	case CmdNumKeys:
		return appendU64(nil, uint64(len(s.data))), nil
	case CmdDeleteKey:
		return s.deleteLocked(q.Keys[0]), nil
	default:
		return nil, fmt.Errorf("unknown command %d", q.Cmd)
	}
}

// compareSetLocked sets k to next if it holds expected (or is unset and
// expected is empty), and answers the value k then holds.
func (s *Server) compareSetLocked(k string, expected, next []byte, wakes *[]wake) ([]byte, error) {
	cur, ok := s.data[k]
	switch {
	case !ok && len(expected) == 0:
		if err := s.setLocked(k, next, wakes); err != nil {
			return nil, err
		}
		return appendBytes(nil, next), nil
	case !ok:
		// torch's server answers the expected value for a key it
		// does not have: the caller sees its swap did not happen.
		return appendBytes(nil, expected), nil
	case string(cur) == string(expected):
		if err := s.setLocked(k, next, wakes); err != nil {
			return nil, err
		}
		return appendBytes(nil, next), nil
	default:
		return appendBytes(nil, cur), nil
	}
}

// multiGetLocked answers the values of keys, every one of which must be set.
func (s *Server) multiGetLocked(keys []string) ([]byte, error) {
	var reply []byte
	for _, k := range keys {
		v, ok := s.data[k]
		if !ok {
			return nil, fmt.Errorf("multi-get of %q, which is not set", k)
		}
		reply = appendBytes(reply, v)
	}
	return reply, nil
}

// addLocked adds n to the number k holds (0 when unset) and answers the sum.
func (s *Server) addLocked(k string, n int64, wakes *[]wake) ([]byte, error) {
	if cur, ok := s.data[k]; ok {
		have, err := strconv.ParseInt(string(cur), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("add to %q, whose value is not a number", k)
		}
		n += have
	}
	if err := s.setLocked(k, []byte(strconv.FormatInt(n, 10)), wakes); err != nil {
		return nil, err
	}
	return appendU64(nil, uint64(n)), nil
}

// checkLocked answers whether every one of keys is set.
func (s *Server) checkLocked(keys []string) []byte {
	for _, k := range keys {
		if _, ok := s.data[k]; !ok {
			return []byte{checkNotReady}
		}
	}
	return []byte{checkReady}
}

// waitLocked makes c wait for those of keys that are unset; it answers at
// once (STOP_WAITING) when none is.
func (s *Server) waitLocked(c *conn, keys []string) []byte {
	s.clearWaitLocked(c)
	for _, k := range keys {
		if _, ok := s.data[k]; !ok {
			s.waiters[k] = append(s.waiters[k], c)
			c.waitFor = append(c.waitFor, k)
			c.pending++
		}
	}
	if c.pending == 0 {
		return []byte{waitStop}
	}
	return nil
}

// deleteLocked deletes k and answers how many keys it deleted (0 or 1).
func (s *Server) deleteLocked(k string) []byte {
	n := uint64(0)
	if v, ok := s.data[k]; ok {
		s.bytes -= len(k) + len(v)
		delete(s.data, k)
		n = 1
	}
	return appendU64(nil, n)
}

func (s *Server) account(n int) error {
	if s.bytes+n > MaxStoreBytes {
		return fmt.Errorf("the store would hold more than %d bytes", MaxStoreBytes)
	}
	s.bytes += n
	return nil
}

// setLocked stores v under k and owes STOP_WAITING to the connections
// whose last awaited key this was.
func (s *Server) setLocked(k string, v []byte, wakes *[]wake) error {
	old, had := s.data[k]
	delta := len(v) - len(old)
	if !had {
		delta += len(k)
	}
	if err := s.account(delta); err != nil {
		return err
	}
	s.data[k] = v
	for _, c := range s.waiters[k] {
		c.pending--
		if c.pending == 0 {
			c.waitFor = nil
			*wakes = append(*wakes, wake{c, []byte{waitStop}})
		}
	}
	delete(s.waiters, k)
	return nil
}

func (s *Server) clearWaitLocked(c *conn) {
	for _, k := range c.waitFor {
		if ws := without(s.waiters[k], c); len(ws) > 0 {
			s.waiters[k] = ws
		} else {
			delete(s.waiters, k)
		}
	}
	c.waitFor, c.pending = nil, 0
}

func without(cs []*conn, c *conn) []*conn {
	out := cs[:0]
	for _, x := range cs {
		if x != c {
			out = append(out, x)
		}
	}
	return out
}
