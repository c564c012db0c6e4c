package rendezvous

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

// waitingBoard signals each warning long poll reaching the Board.
type waitingBoard struct {
	*Board
	waits chan struct{}
}

func (w waitingBoard) WaitNotice(ctx context.Context, task taskspec.TaskID, containerID string, after uint64) (Notice, error) {
	signal(w.waits)
	return w.Board.WaitNotice(ctx, task, containerID, after)
}

func preemptionNotice(deadline time.Time, reason string) Notice {
	return Notice{Kind: contract.WarningPreemption, Deadline: deadline, Reason: reason}
}

func TestPreemptionWarningReachesTheWaitingLauncher(t *testing.T) {
	secret := testSecret(t)
	b := waitingBoard{newBoard(t, 0, group(taskspec.Worker, 2)), make(chan struct{}, 100)}
	srv := startServer(t, secret, b)
	c := newTestClient(t, srv.addr, secret, "container_1_0001_01_000002", WithLongPoll(300*time.Millisecond))
	w0, w1 := task(taskspec.Worker, 0), task(taskspec.Worker, 1)

	got := make(chan Notice, 1)
	go func() {
		n, err := c.WaitNotice(ctxTimeout(t, 10*time.Second), w0, "container_1_0001_01_000002", 0)
		if err == nil {
			got <- n
		}
		close(got)
	}()
	await(t, b.waits, 1, 5*time.Second, "the launcher's long poll")
	// Another task's notice, and one for an earlier container of this
	// task, do not answer it.
	deadline := time.UnixMilli(time.Now().Add(15 * time.Second).UnixMilli())
	b.Warn(w1, "container_1_0001_01_000003", preemptionNotice(deadline, "for worker:1"))
	b.Warn(w0, "container_1_0001_01_000001", preemptionNotice(deadline, "for an earlier container"))
	select {
	case n := <-got:
		t.Fatalf("the launcher got a notice not meant for it: %+v", n)
	case <-time.After(400 * time.Millisecond):
	}
	sent := time.Now()
	b.Warn(w0, "container_1_0001_01_000002", preemptionNotice(deadline, "the scheduler preempts it"))
	select {
	case n := <-got:
		require.True(t, n.Deadline.Equal(deadline), "%s != %s", n.Deadline, deadline)
		require.Equal(t, "the scheduler preempts it", n.Reason)
		require.Equal(t, contract.WarningPreemption, n.Kind)
		// The long poll answers at once, not at the end of its wait.
		require.Less(t, time.Since(sent), 250*time.Millisecond)
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting launcher did not get its notice")
	}

	// A launcher asking later gets it at once.
	n, err := newTestClient(t, srv.addr, secret, "container_1_0001_01_000003").WaitNotice(ctxTimeout(t, 5*time.Second), w1, "container_1_0001_01_000003", 0)
	require.NoError(t, err)
	require.Equal(t, "for worker:1", n.Reason)

	// No notice: "none yet" until ctx ends.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = newTestClient(t, srv.addr, secret, "container_1_0001_01_000009", WithLongPoll(300*time.Millisecond)).WaitNotice(ctx, w1, "container_1_0001_01_000009", 0)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// A launcher takes a container's warnings one after another, whatever
// their kind: each answer is the first after the one it names. The Board
// keeps the newest maxNoticesPerTask of them.
func TestWarningsOneAfterAnother(t *testing.T) {
	secret := testSecret(t)
	b := newBoard(t, 0, group(taskspec.Worker, 1))
	srv := startServer(t, secret, b)
	const container = "container_1_0001_01_000002"
	c := newTestClient(t, srv.addr, secret, container, WithLongPoll(300*time.Millisecond))
	w0 := task(taskspec.Worker, 0)
	ends := time.UnixMilli(time.Now().Add(time.Minute).UnixMilli())
	b.Warn(w0, container, Notice{Kind: contract.WarningGPUIdle, Deadline: ends, Reason: "GPUs idle for 30s (0 % utilisation)"})
	b.Warn(w0, container, Notice{Kind: contract.WarningGPUIdle, Reason: "GPUs idle past the timeout (--gpu-idle-action warn)"})

	first, err := c.WaitNotice(ctxTimeout(t, 5*time.Second), w0, container, 0)
	require.NoError(t, err)
	require.Equal(t, contract.WarningGPUIdle, first.Kind)
	require.True(t, first.Deadline.Equal(ends))
	second, err := c.WaitNotice(ctxTimeout(t, 5*time.Second), w0, container, first.Seq)
	require.NoError(t, err)
	require.Greater(t, second.Seq, first.Seq)
	require.True(t, second.Deadline.IsZero(), "no end with --gpu-idle-action warn")
	require.Contains(t, second.Reason, "--gpu-idle-action warn")

	got := make(chan Notice, 1)
	go func() {
		n, err := c.WaitNotice(ctxTimeout(t, 10*time.Second), w0, container, second.Seq)
		if err == nil {
			got <- n
		}
		close(got)
	}()
	time.Sleep(100 * time.Millisecond)
	b.Warn(w0, container, preemptionNotice(ends, "YARN's scheduler will preempt container "+container))
	select {
	case n := <-got:
		require.Equal(t, contract.WarningPreemption, n.Kind)
	case <-time.After(5 * time.Second):
		t.Fatal("the third warning did not reach the waiting launcher")
	}

	for i := range 3 * maxNoticesPerTask {
		b.Warn(w0, container, Notice{Kind: contract.WarningGPUIdle, Reason: fmt.Sprint(i)})
	}
	oldest, err := b.WaitNotice(ctxTimeout(t, time.Second), w0, container, 0)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprint(2*maxNoticesPerTask), oldest.Reason, "the newest are kept")
	require.Len(t, b.warnings.notices[w0], maxNoticesPerTask)
}

func TestWarningEndpointRefusals(t *testing.T) {
	secret := testSecret(t)
	srv := startServer(t, secret, newBoard(t, 0, group(taskspec.Worker, 1)))
	u := "http://" + srv.addr + PathPrefix + "warning?"
	for _, tc := range []struct {
		query  string
		status int
	}{
		{"task=worker:0&wait=10", http.StatusForbidden},                                          // which container? not the signer's
		{"task=worker:0&container=a%20b&wait=10", http.StatusForbidden},                          // not an id, not the signer's
		{"task=worker:7&container=" + testContainer + "&wait=10", http.StatusNotFound},           // not a task of the job
		{"task=worker:0&container=" + testContainer + "&after=x&wait=10", http.StatusBadRequest}, // not a number
		{"task=worker:0&container=" + testContainer + "&wait=10", http.StatusNoContent},          // fine: none yet
	} {
		status, body, _ := sendSigned(t, signedRequest(t, secret, http.MethodGet, u+tc.query, nil))
		require.Equal(t, tc.status, status, "%s: %s", tc.query, body)
	}
	// Unsigned: refused.
	req, err := http.NewRequest(http.MethodGet, u+"task=worker:0&container=container_1", nil)
	require.NoError(t, err)
	status, _ := send(t, req)
	require.Equal(t, http.StatusUnauthorized, status)
}

func TestWarningNotServed(t *testing.T) {
	secret := testSecret(t)
	srv := startServer(t, secret, oldAM{newBoard(t, 0, group(taskspec.Worker, 1))})
	c := newTestClient(t, srv.addr, secret, "container_1")
	_, err := c.WaitNotice(ctxTimeout(t, 5*time.Second), task(taskspec.Worker, 0), "container_1", 0)
	require.ErrorIs(t, err, ErrNotServed)
}

func TestDecodeNotice(t *testing.T) {
	n, err := DecodeNotice([]byte(`{"seq":1,"kind":"preemption","deadline_unix_ms":1764102615123,"reason":"r"}`))
	require.NoError(t, err)
	require.Equal(t, int64(1764102615123), n.Deadline.UnixMilli())
	n, err = DecodeNotice([]byte(`{"seq":2,"kind":"gpu-idle","deadline_unix_ms":0,"reason":"r"}`))
	require.NoError(t, err)
	require.True(t, n.Deadline.IsZero())
	for _, bad := range []string{
		`{"seq":1,"kind":"preemption","deadline_unix_ms":5,"reason":"r"}`,
		`{"seq":1,"kind":"preemption","deadline_unix_ms":0,"reason":"r"}`,
		`{"seq":1,"kind":"preemption","deadline_unix_ms":99999999999999999,"reason":"r"}`,
		`{"seq":1,"kind":"preemption","deadline_unix_ms":1764102615123,"reason":"a\u0007b"}`,
		`{"seq":1,"kind":"preemption","deadline_unix_ms":1764102615123,"reason":"` + strings.Repeat("x", 1025) + `"}`,
		`{"seq":1,"kind":"preemption","deadline_unix_ms":1764102615123}{}`,
		`{"seq":0,"kind":"preemption","deadline_unix_ms":1764102615123,"reason":"r"}`,
		`{"seq":1,"kind":"fire","deadline_unix_ms":1764102615123,"reason":"r"}`,
		`{"seq":1,"deadline_unix_ms":1764102615123,"reason":"r"}`,
		`[]`,
	} {
		_, err := DecodeNotice([]byte(bad))
		require.Error(t, err, bad)
	}
}

func FuzzDecodeNotice(f *testing.F) {
	f.Add(encodeNotice(Notice{Seq: 1, Kind: contract.WarningPreemption, Deadline: time.UnixMilli(1764102615123), Reason: "preempted"}))
	f.Add(encodeNotice(Notice{Seq: 7, Kind: contract.WarningGPUIdle, Reason: "idle"}))
	f.Add([]byte(`{"seq":1,"kind":"preemption","deadline_unix_ms":-1,"reason":""}`))
	f.Add([]byte(`{"deadline_unix_ms":1e30}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := DecodeNotice(body)
		if err != nil {
			return
		}
		again, err := DecodeNotice(encodeNotice(n))
		if err != nil || !again.Deadline.Equal(n.Deadline) || again.Reason != n.Reason || again.Seq != n.Seq || again.Kind != n.Kind {
			t.Fatalf("round trip: %+v → %+v, %v", n, again, err)
		}
	})
}
