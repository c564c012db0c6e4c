package rendezvous

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/taskspec"
)

// stoppableServer serves h on a loopback port until stop (a killed AM).
func stoppableServer(t *testing.T, secret []byte, h Handler) (addr string, stop func()) {
	t.Helper()
	srv, err := NewServer(secret, h)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return ln.Addr().String(), stop
}

// An AM attempt dies and the next one, which adopted the task, comes up at
// another address: the launcher's calls find it through the locator (which
// names the old address until the new attempt has announced its own), register
// again there, and get the new attempt's stop order.
func TestClientFollowsTheAMToItsNewAddress(t *testing.T) {
	secret := testSecret(t)
	m := newMovingClient(t, secret, "the fake's file")
	c, r, oldAddr, kill, ctx := m.c, m.r, m.oldAddr, m.kill, m.ctx

	kill()
	// The next attempt starts and adopts the task as the old one saved it.
	next := newBoard(t, 0, group(taskspec.Worker, 1))
	next.Adopt(Registration{Task: r.Task, Host: r.Host, Port: r.Port, ContainerID: r.ContainerID})
	_, published := next.Published()
	require.True(t, published, "every cluster task adopted: the spec is out")
	nextAddr, _ := stoppableServer(t, secret, next)

	orders := make(chan StopOrder, 1)
	errs := make(chan error, 1)
	go func() {
		o, err := c.WaitStop(ctx, r.Task, r.ContainerID)
		errs <- err
		orders <- o
	}()
	// Lookups that still find the dead attempt's address change nothing.
	require.Eventually(t, func() bool { return m.lookups.Load() >= 2 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, oldAddr, c.Address())
	m.where.Store(nextAddr)

	select {
	case addr := <-m.moved:
		require.Equal(t, nextAddr, addr)
	case <-time.After(10 * time.Second):
		t.Fatal("the client did not move to the new AM within 10s")
	}
	require.Equal(t, nextAddr, c.Address())
	var again []TaskRegistered
	require.Eventually(t, func() bool {
		for _, e := range next.Drain() {
			if tr, ok := e.(TaskRegistered); ok {
				again = append(again, tr)
			}
		}
		return len(again) > 0
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, []TaskRegistered{{Registration: r, Again: true}}, again)

	next.Stop(r.Task, "the job is decided")
	require.NoError(t, <-errs)
	require.Equal(t, "the job is decided", (<-orders).Reason)
}

// No new AM appears: the client gives up after GiveUp, saying what it
// waited for and where it looked, and later calls fail at once the same way.
func TestClientGivesUpWhenNoNewAMAppears(t *testing.T) {
	secret := testSecret(t)
	b := newBoard(t, 0, group(taskspec.Worker, 1))
	addr, kill := stoppableServer(t, secret, b)
	r := reg(taskspec.Worker, 0, 2222)
	r.PID = 42
	b.Assign(r.Task, r.ContainerID)
	c := newTestClient(t, addr, secret, r.ContainerID, WithLocator(LocatorConfig{
		Locate: func(ctx context.Context) (string, error) {
			return "", errors.New("no later ApplicationMaster attempt has called yet")
		},
		Where: "control port node1:4242", After: 50 * time.Millisecond, Every: 20 * time.Millisecond, GiveUp: 400 * time.Millisecond,
	}))
	ctx := ctxTimeout(t, 20*time.Second)
	require.NoError(t, c.Register(ctx, r))
	kill()

	start := time.Now()
	_, err := c.WaitStop(ctx, r.Task, r.ContainerID)
	require.ErrorIs(t, err, ErrAMLost)
	require.Less(t, time.Since(start), 10*time.Second)
	msg := err.Error()
	for _, want := range []string{"the AM at " + addr + " has not answered for 400ms", "control port node1:4242 named no other AM", "last lookup: no later ApplicationMaster attempt has called yet"} {
		require.True(t, strings.Contains(msg, want), "%q lacks %q", msg, want)
	}
	start = time.Now()
	err = c.ReportExit(ctx, ExitReport{Task: r.Task, ContainerID: r.ContainerID, ExitCode: 0})
	require.ErrorIs(t, err, ErrAMLost)
	require.Less(t, time.Since(start), time.Second)
}

// movingClient is a launcher's client registered as worker:0 with an AM
// attempt the test can kill (kill), and with a locator that names where,
// counting its lookups and reporting each move (moved), as the launcher's
// control port would after a new attempt announced itself.
type movingClient struct {
	c       *Client
	r       Registration
	old     *Board
	oldAddr string
	kill    func()
	where   atomic.Value
	lookups atomic.Int32
	moved   chan string
	ctx     context.Context
}

func newMovingClient(t *testing.T, secret []byte, where string) *movingClient {
	m := &movingClient{r: reg(taskspec.Worker, 0, 2222), moved: make(chan string, 4)}
	m.r.PID = 42
	m.old = newBoard(t, 0, group(taskspec.Worker, 1))
	m.oldAddr, m.kill = stoppableServer(t, secret, m.old)
	m.where.Store(m.oldAddr)
	m.c = newTestClient(t, m.oldAddr, secret, m.r.ContainerID, WithLocator(LocatorConfig{
		Locate: func(ctx context.Context) (string, error) {
			m.lookups.Add(1)
			return m.where.Load().(string), nil
		},
		Where: where, After: 100 * time.Millisecond, Every: 20 * time.Millisecond, GiveUp: time.Minute,
		Moved: func(addr string, err error) {
			require.NoError(t, err)
			m.moved <- addr
		},
	}))
	m.ctx = ctxTimeout(t, 20*time.Second)
	require.NoError(t, m.c.Register(m.ctx, m.r))
	m.old.Assign(m.r.Task, m.r.ContainerID)
	return m
}
