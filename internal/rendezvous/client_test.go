package rendezvous

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/taskspec"
)

// newTestClient is the client of the launcher in container, holding its
// key from secret.
func newTestClient(t testing.TB, addr string, secret []byte, container string, opts ...ClientOption) *Client {
	t.Helper()
	opts = append([]ClientOption{WithBackoff(10*time.Millisecond, 100*time.Millisecond), WithLongPoll(time.Second)}, opts...)
	c, err := NewClient(addr, container, ContainerKey(secret, container), opts...)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func TestClientConcurrentRendezvous(t *testing.T) {
	const workers, ps = 27, 3
	secret := testSecret(t)
	board := newBoard(t, 30*time.Second, group(taskspec.Chief, 1), group(taskspec.Worker, workers), group(taskspec.PS, ps))
	srv := startServer(t, secret, board)

	var ids []taskspec.TaskID
	ids = append(ids, task(taskspec.Chief, 0))
	for i := 0; i < workers; i++ {
		ids = append(ids, task(taskspec.Worker, i))
	}
	for i := 0; i < ps; i++ {
		ids = append(ids, task(taskspec.PS, i))
	}
	ctx := ctxTimeout(t, 20*time.Second)
	specs := make([]taskspec.ClusterSpec, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := Registration{Task: id, Host: fmt.Sprintf("node%d", i), Port: 2000 + i, ContainerID: fmt.Sprintf("container_%d", i), PID: 100 + i}
			c := newTestClient(t, srv.addr, secret, r.ContainerID)
			if errs[i] = c.Register(ctx, r); errs[i] != nil {
				return
			}
			specs[i], errs[i] = c.WaitSpec(ctx, id)
		}()
	}
	wg.Wait()
	for i := range ids {
		require.NoError(t, errs[i], ids[i].String())
		require.Equal(t, specs[0], specs[i])
	}
	require.Len(t, specs[0][taskspec.Worker], workers)
	require.Equal(t, "node5:2005", specs[0][taskspec.Worker][4])
	require.Len(t, board.Registrations(), len(ids))
}

func TestClientRetriesUntilTheAMListens(t *testing.T) {
	secret := testSecret(t)
	// Hold an address that answers no HTTP: the client's first attempt
	// fails there; then the address refuses connections until the server
	// listens on it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()

	board := newBoard(t, 0, group(taskspec.Worker, 1))
	c := newTestClient(t, addr, secret, reg(taskspec.Worker, 0, 1234).ContainerID)
	done := make(chan error, 1)
	go func() { done <- c.Register(ctxTimeout(t, 10*time.Second), reg(taskspec.Worker, 0, 1234)) }()

	nc, err := ln.Accept() // the client tried
	require.NoError(t, err)
	require.NoError(t, ln.Close())
	require.NoError(t, nc.Close())
	srv, err := NewServer(secret, board)
	require.NoError(t, err)
	ln, err = net.Listen("tcp", addr)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = srv.Serve(ctx, ln) }()

	require.NoError(t, <-done)
	require.Len(t, board.Registrations(), 1)
}

func TestClientWrongSecret(t *testing.T) {
	board := newBoard(t, 0, group(taskspec.Worker, 1))
	srv := startServer(t, testSecret(t), board)
	c := newTestClient(t, srv.addr, testSecret(t), reg(taskspec.Worker, 0, 1234).ContainerID)
	err := c.Register(ctxTimeout(t, 3*time.Second), reg(taskspec.Worker, 0, 1234))
	require.ErrorIs(t, err, ErrUnauthorized)
	require.ErrorContains(t, err, "wrong container key")
	require.ErrorContains(t, err, "bad signature", "the AM's unsigned reason is passed on")
	require.Empty(t, board.Registrations())
}

func TestClientGivesUpAtItsDeadline(t *testing.T) {
	secret := testSecret(t)
	board := newBoard(t, 0, group(taskspec.Worker, 2))
	srv := startServer(t, secret, board)
	c := newTestClient(t, srv.addr, secret, reg(taskspec.Worker, 0, 1).ContainerID, WithLongPoll(50*time.Millisecond))
	require.NoError(t, c.Register(context.Background(), reg(taskspec.Worker, 0, 1)))
	start := time.Now()
	_, err := c.WaitSpec(ctxTimeout(t, 300*time.Millisecond), task(taskspec.Worker, 0))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 2*time.Second)
}

func TestClientSeesRendezvousFailure(t *testing.T) {
	secret := testSecret(t)
	board := newBoard(t, 100*time.Millisecond, group(taskspec.Worker, 2))
	srv := startServer(t, secret, board)
	c := newTestClient(t, srv.addr, secret, reg(taskspec.Worker, 0, 1).ContainerID)
	require.NoError(t, c.Register(context.Background(), reg(taskspec.Worker, 0, 1)))
	_, err := c.WaitSpec(ctxTimeout(t, 5*time.Second), task(taskspec.Worker, 0))
	require.ErrorIs(t, err, ErrRendezvousFailed)
	require.ErrorContains(t, err, "missing worker:1")
}

func TestClientStopAndExit(t *testing.T) {
	secret := testSecret(t)
	board := watch(newBoard(t, 0, group(taskspec.PS, 1)))
	srv := startServer(t, secret, board)
	r := reg(taskspec.PS, 0, 1)
	c := newTestClient(t, srv.addr, secret, r.ContainerID, WithLongPoll(100*time.Millisecond))
	require.NoError(t, c.Register(context.Background(), r))

	got := make(chan StopOrder, 1)
	go func() {
		o, err := c.WaitStop(ctxTimeout(t, 10*time.Second), r.Task, r.ContainerID)
		if err == nil {
			got <- o
		}
	}()
	await(t, board.stopWaits, 3, 10*time.Second, "long polls for a stop order") // the order comes across a few long polls
	board.Stop(r.Task, "chief finished")
	select {
	case o := <-got:
		require.Equal(t, "chief finished", o.Reason)
	case <-time.After(5 * time.Second):
		t.Fatal("no stop order")
	}

	long := make([]string, 500)
	for i := range long {
		long[i] = fmt.Sprintf("line %d %s", i, string(make([]byte, 2000)))
	}
	require.NoError(t, c.ReportExit(context.Background(), ExitReport{Task: r.Task, ContainerID: r.ContainerID, ExitCode: 143, Stopped: true, Signal: "SIGTERM", StderrTail: long}))
	e, ok := board.Exit(r.Task)
	require.True(t, ok)
	require.Equal(t, 143, e.ExitCode)
	require.True(t, e.Stopped)
	require.Equal(t, "SIGTERM", e.Signal)
	require.NotEmpty(t, e.StderrTail)
	require.LessOrEqual(t, len(e.StderrTail), MaxStderrLines)
	require.Contains(t, e.StderrTail[len(e.StderrTail)-1], "line 499", "the newest lines are kept")
}
