package rendezvous

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/taskspec"
)

// waitingBoard signals each preemption long poll reaching the Board.
type waitingBoard struct {
	*Board
	waits chan struct{}
}

func (w waitingBoard) WaitPreemption(ctx context.Context, task taskspec.TaskID, containerID string) (PreemptionNotice, error) {
	signal(w.waits)
	return w.Board.WaitPreemption(ctx, task, containerID)
}

func TestPreemptionWarningReachesTheWaitingLauncher(t *testing.T) {
	secret := testSecret(t)
	b := waitingBoard{newBoard(t, 0, group(taskspec.Worker, 2)), make(chan struct{}, 100)}
	srv := startServer(t, secret, b)
	c := newTestClient(t, srv.addr, secret, "container_1_0001_01_000002", WithLongPoll(300*time.Millisecond))
	w0, w1 := task(taskspec.Worker, 0), task(taskspec.Worker, 1)

	got := make(chan PreemptionNotice, 1)
	go func() {
		n, err := c.WaitPreemption(ctxTimeout(t, 10*time.Second), w0, "container_1_0001_01_000002")
		if err == nil {
			got <- n
		}
		close(got)
	}()
	await(t, b.waits, 1, 5*time.Second, "the launcher's long poll")
	// Another task's notice, and one for an earlier container of this
	// task, do not answer it.
	deadline := time.UnixMilli(time.Now().Add(15 * time.Second).UnixMilli())
	b.WarnPreemption(w1, "container_1_0001_01_000003", PreemptionNotice{Deadline: deadline, Reason: "for worker:1"})
	b.WarnPreemption(w0, "container_1_0001_01_000001", PreemptionNotice{Deadline: deadline, Reason: "for an earlier container"})
	select {
	case n := <-got:
		t.Fatalf("the launcher got a notice not meant for it: %+v", n)
	case <-time.After(400 * time.Millisecond):
	}
	sent := time.Now()
	b.WarnPreemption(w0, "container_1_0001_01_000002", PreemptionNotice{Deadline: deadline, Reason: "the scheduler preempts it"})
	select {
	case n := <-got:
		require.True(t, n.Deadline.Equal(deadline), "%s != %s", n.Deadline, deadline)
		require.Equal(t, "the scheduler preempts it", n.Reason)
		// The long poll answers at once, not at the end of its wait.
		require.Less(t, time.Since(sent), 250*time.Millisecond)
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting launcher did not get its notice")
	}

	// A launcher asking later gets it at once.
	n, err := newTestClient(t, srv.addr, secret, "container_1_0001_01_000003").WaitPreemption(ctxTimeout(t, 5*time.Second), w1, "container_1_0001_01_000003")
	require.NoError(t, err)
	require.Equal(t, "for worker:1", n.Reason)

	// No notice: "none yet" until ctx ends.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = newTestClient(t, srv.addr, secret, "container_1_0001_01_000009", WithLongPoll(300*time.Millisecond)).WaitPreemption(ctx, w1, "container_1_0001_01_000009")
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestPreemptionEndpointRefusals(t *testing.T) {
	secret := testSecret(t)
	srv := startServer(t, secret, newBoard(t, 0, group(taskspec.Worker, 1)))
	u := "http://" + srv.addr + PathPrefix + "preemption?"
	for _, tc := range []struct {
		query  string
		status int
	}{
		{"task=worker:0&wait=10", http.StatusForbidden},                                 // which container? not the signer's
		{"task=worker:0&container=a%20b&wait=10", http.StatusForbidden},                 // not an id, not the signer's
		{"task=worker:7&container=" + testContainer + "&wait=10", http.StatusNotFound},  // not a task of the job
		{"task=worker:0&container=" + testContainer + "&wait=10", http.StatusNoContent}, // fine: none yet
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

func TestPreemptionNotServed(t *testing.T) {
	secret := testSecret(t)
	srv := startServer(t, secret, oldAM{newBoard(t, 0, group(taskspec.Worker, 1))})
	c := newTestClient(t, srv.addr, secret, "container_1")
	_, err := c.WaitPreemption(ctxTimeout(t, 5*time.Second), task(taskspec.Worker, 0), "container_1")
	require.ErrorIs(t, err, ErrNotServed)
}

func TestDecodePreemptionNotice(t *testing.T) {
	n, err := DecodePreemptionNotice([]byte(`{"deadline_unix_ms":1764102615123,"reason":"r"}`))
	require.NoError(t, err)
	require.Equal(t, int64(1764102615123), n.Deadline.UnixMilli())
	for _, bad := range []string{
		`{"deadline_unix_ms":5,"reason":"r"}`,
		`{"deadline_unix_ms":99999999999999999,"reason":"r"}`,
		`{"deadline_unix_ms":1764102615123,"reason":"a\u0007b"}`,
		`{"deadline_unix_ms":1764102615123,"reason":"` + strings.Repeat("x", 1025) + `"}`,
		`{"deadline_unix_ms":1764102615123}{}`,
		`[]`,
	} {
		_, err := DecodePreemptionNotice([]byte(bad))
		require.Error(t, err, bad)
	}
}

func FuzzDecodePreemptionNotice(f *testing.F) {
	f.Add(encodePreemption(PreemptionNotice{Deadline: time.UnixMilli(1764102615123), Reason: "preempted"}))
	f.Add([]byte(`{"deadline_unix_ms":-1,"reason":""}`))
	f.Add([]byte(`{"deadline_unix_ms":1e30}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		n, err := DecodePreemptionNotice(body)
		if err != nil {
			return
		}
		again, err := DecodePreemptionNotice(encodePreemption(n))
		if err != nil || !again.Deadline.Equal(n.Deadline) || again.Reason != n.Reason {
			t.Fatalf("round trip: %+v → %+v, %v", n, again, err)
		}
	})
}
