package rendezvous

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/taskspec"
)

// squat binds addr (a dead AM attempt's port) and answers every request
// with an unsigned 401, as a local user on that node could; it counts them.
func squat(t *testing.T, addr string) *atomic.Int32 {
	t.Helper()
	var ln net.Listener
	require.Eventually(t, func() bool {
		var err error
		ln, err = net.Listen("tcp", addr)
		return err == nil
	}, 5*time.Second, 10*time.Millisecond, "binding the dead AM's port %s", addr)
	var hits atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"code":"unauthorized","error":"bad signature (wrong key, or the request was altered)"}`))
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return &hits
}

// Issue 33.3: an AM attempt dies and a local user binds its port,
// answering every launcher's call with an unsigned 401. Those answers do
// not verify, so they are no answers: the launcher keeps asking its
// locator (the control port, which the next attempt calls) and moves to
// the next attempt when it announces itself, and gets its stop order there.
func TestClientLeavesASquatterForTheNextAM(t *testing.T) {
	secret := testSecret(t)
	m := newMovingClient(t, secret, "control port node1:4242")
	c, r, oldAddr, kill, ctx := m.c, m.r, m.oldAddr, m.kill, m.ctx

	kill()
	hits := squat(t, oldAddr)
	errs := make(chan error, 1)
	orders := make(chan StopOrder, 1)
	go func() {
		o, err := c.WaitStop(ctx, r.Task, r.ContainerID)
		errs <- err
		orders <- o
	}()
	// The squatter is asked, and answers; the client keeps looking.
	require.Eventually(t, func() bool { return hits.Load() >= 2 && m.lookups.Load() >= 2 }, 10*time.Second, 10*time.Millisecond)
	select {
	case err := <-errs:
		t.Fatalf("the squatter's unsigned 401 ended the wait: %v", err)
	default:
	}
	require.Equal(t, oldAddr, c.Address())

	// The next attempt comes up elsewhere and announces itself.
	next := newBoard(t, 0, group(taskspec.Worker, 1))
	next.Adopt(Registration{Task: r.Task, Host: r.Host, Port: r.Port, ContainerID: r.ContainerID})
	nextAddr, _ := stoppableServer(t, secret, next)
	m.where.Store(nextAddr)
	select {
	case addr := <-m.moved:
		require.Equal(t, nextAddr, addr)
	case <-time.After(10 * time.Second):
		t.Fatal("the client did not leave the squatter for the announced AM within 10s")
	}
	next.Stop(r.Task, "the job is decided")
	require.NoError(t, <-errs)
	require.Equal(t, "the job is decided", (<-orders).Reason)
}

// No next attempt announces itself: the client gives up at GiveUp, saying
// what it waited for, where, and that the answers there did not verify.
func TestClientGivesUpOnASquatterSayingSo(t *testing.T) {
	secret := testSecret(t)
	b := newBoard(t, 0, group(taskspec.Worker, 1))
	addr, kill := stoppableServer(t, secret, b)
	r := reg(taskspec.Worker, 0, 2222)
	b.Assign(r.Task, r.ContainerID)
	c := newTestClient(t, addr, secret, r.ContainerID, WithLocator(LocatorConfig{
		Locate: func(ctx context.Context) (string, error) {
			return "", errors.New("no later ApplicationMaster attempt has called yet")
		},
		Where: "control port node1:4242", After: 50 * time.Millisecond, Every: 20 * time.Millisecond, GiveUp: 500 * time.Millisecond,
	}))
	ctx := ctxTimeout(t, 20*time.Second)
	require.NoError(t, c.Register(ctx, r))
	kill()
	squat(t, addr)

	start := time.Now()
	_, err := c.WaitStop(ctx, r.Task, r.ContainerID)
	require.ErrorIs(t, err, ErrAMLost)
	require.Less(t, time.Since(start), 10*time.Second)
	msg := err.Error()
	for _, want := range []string{"the AM at " + addr + " has not answered for 500ms", "control port node1:4242 named no other AM",
		"the answer from " + addr + " did not verify (HTTP 401", "a stranger holds the AM's port"} {
		require.True(t, strings.Contains(msg, want), "%q lacks %q", msg, want)
	}
}
