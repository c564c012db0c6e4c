package rendezvous

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/taskspec"
)

func newOrderedBoard(t *testing.T, timeout time.Duration, order string, groups ...taskspec.TaskGroup) *Board {
	t.Helper()
	o, err := taskspec.ParseStartAfter(order)
	require.NoError(t, err)
	b, err := NewBoard(BoardConfig{Groups: groups, RegistrationTimeout: timeout, StartAfter: o})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	return b
}

// mayStart is whether task gets the spec within a moment.
func mayStart(b *Board, id taskspec.TaskID) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err := b.Spec(ctx, id)
	return err == nil
}

// The start order, step by step: what each step does and which tasks may
// start their programs after it.
func TestBoardStartAfterTranscript(t *testing.T) {
	b := newOrderedBoard(t, 0, "worker=ps,evaluator=chief",
		group(taskspec.Chief, 1), group(taskspec.Worker, 2), group(taskspec.PS, 2), group(taskspec.Evaluator, 1))
	ctx := context.Background()
	all := []taskspec.TaskID{task(taskspec.Chief, 0), task(taskspec.Worker, 0), task(taskspec.Worker, 1), task(taskspec.PS, 0), task(taskspec.PS, 1), task(taskspec.Evaluator, 0)}
	regs := map[taskspec.TaskID]Registration{}
	for i, id := range all {
		r := Registration{Task: id, Host: "node1.example.com", Port: 1000 + i, ContainerID: "container_1_0001_01_00000" + string(rune('2'+i))}
		regs[id] = r
	}
	startable := func() []string {
		var out []string
		for _, id := range all {
			if mayStart(b, id) {
				out = append(out, id.String())
			}
		}
		return out
	}
	for _, step := range []struct {
		do   func()
		what string
		want []string
	}{
		{func() {}, "nobody registered", nil},
		{func() {
			for _, id := range all {
				require.NoError(t, b.Register(ctx, regs[id]))
			}
		}, "everyone registered: the spec is out, but not for the waiting types", []string{"chief:0", "ps:0", "ps:1"}},
		{func() {
			// Another container's wait for ps:0 is not ps:0's start.
			stopCtx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
			defer cancel()
			_, _ = b.WaitStop(stopCtx, task(taskspec.PS, 0), "container_other")
		}, "a stranger container waits for ps:0's stop order", []string{"chief:0", "ps:0", "ps:1"}},
		{func() {
			stopCtx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
			defer cancel()
			_, _ = b.WaitStop(stopCtx, task(taskspec.PS, 0), regs[task(taskspec.PS, 0)].ContainerID)
		}, "ps:0's program started: ps:1 has not", []string{"chief:0", "ps:0", "ps:1"}},
		{func() {
			require.NoError(t, b.ReportExit(ctx, ExitReport{Task: task(taskspec.PS, 1), ContainerID: regs[task(taskspec.PS, 1)].ContainerID, ExitCode: 1}))
		}, "ps:1 reported an exit: waiting for it is over", []string{"chief:0", "worker:0", "worker:1", "ps:0", "ps:1"}},
		{func() {
			stopCtx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
			defer cancel()
			_, _ = b.WaitStop(stopCtx, task(taskspec.Chief, 0), regs[task(taskspec.Chief, 0)].ContainerID)
		}, "chief:0 started: the evaluator may start too", []string{"chief:0", "worker:0", "worker:1", "ps:0", "ps:1", "evaluator:0"}},
		{func() {
			b.Reset()
			for _, id := range all {
				require.NoError(t, b.Register(ctx, regs[id]))
			}
		}, "a restart forgets who started", []string{"chief:0", "ps:0", "ps:1"}},
	} {
		step.do()
		require.Equal(t, step.want, startable(), step.what)
	}
}

// A waiting launcher is released the moment the last task it waits for
// starts, not at its next poll.
func TestBoardStartAfterReleasesWaiter(t *testing.T) {
	b := newOrderedBoard(t, 0, "worker=ps", group(taskspec.Worker, 1), group(taskspec.PS, 1))
	ctx := context.Background()
	w, p := reg(taskspec.Worker, 0, 1000), Registration{Task: task(taskspec.PS, 0), Host: "node2", Port: 1001, ContainerID: "container_ps"}
	require.NoError(t, b.Register(ctx, w))
	require.NoError(t, b.Register(ctx, p))
	got := make(chan error, 1)
	go func() {
		_, err := b.Spec(ctxTimeout(t, 5*time.Second), w.Task)
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("worker:0 got the spec before ps:0 started: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	stopCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _, _ = b.WaitStop(stopCtx, p.Task, p.ContainerID) }()
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(2 * time.Second):
		t.Fatal("worker:0 still waits after ps:0 started")
	}
}

// A ps that registers but never starts ends the rendezvous by the
// registration timeout, naming what waits for what; one that never
// registers is named by the registration timeout's own message.
func TestBoardStartAfterDeadline(t *testing.T) {
	t.Run("never started", func(t *testing.T) {
		b := newOrderedBoard(t, 80*time.Millisecond, "worker=ps", group(taskspec.Worker, 2), group(taskspec.PS, 2))
		ctx := context.Background()
		for i := 0; i < 2; i++ {
			require.NoError(t, b.Register(ctx, Registration{Task: task(taskspec.Worker, i), Host: "h", Port: 1000 + i, ContainerID: "cw" + string(rune('0'+i))}))
			require.NoError(t, b.Register(ctx, Registration{Task: task(taskspec.PS, i), Host: "h", Port: 2000 + i, ContainerID: "cp" + string(rune('0'+i))}))
		}
		stopCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { _, _ = b.WaitStop(stopCtx, task(taskspec.PS, 0), "cp0") }()
		_, err := b.Spec(ctxTimeout(t, 5*time.Second), task(taskspec.Worker, 1))
		require.ErrorIs(t, err, ErrRendezvousFailed)
		require.EqualError(t, err, "rendezvous failed: the start order was not met within 80ms: worker waits for ps:1 to start (--start-after worker=ps)")
		var failed []string
		for _, e := range b.Drain() {
			if f, ok := e.(RendezvousFailed); ok {
				failed = append(failed, f.Err.Error())
			}
		}
		require.Equal(t, []string{"the start order was not met within 80ms: worker waits for ps:1 to start (--start-after worker=ps)"}, failed)
	})
	t.Run("never registered", func(t *testing.T) {
		b := newOrderedBoard(t, 50*time.Millisecond, "worker=ps", group(taskspec.Worker, 1), group(taskspec.PS, 1))
		require.NoError(t, b.Register(context.Background(), reg(taskspec.Worker, 0, 1000)))
		_, err := b.Spec(ctxTimeout(t, 5*time.Second), task(taskspec.Worker, 0))
		require.EqualError(t, err, "rendezvous failed: not every task registered within 50ms: missing ps:0; worker waits for ps:0 to start (--start-after worker=ps)")
	})
	t.Run("met in time", func(t *testing.T) {
		b := newOrderedBoard(t, 50*time.Millisecond, "worker=ps", group(taskspec.Worker, 1), group(taskspec.PS, 1))
		ctx := context.Background()
		require.NoError(t, b.Register(ctx, reg(taskspec.Worker, 0, 1000)))
		require.NoError(t, b.Register(ctx, Registration{Task: task(taskspec.PS, 0), Host: "h", Port: 1, ContainerID: "cp"}))
		require.NoError(t, b.ReportExit(ctx, ExitReport{Task: task(taskspec.PS, 0), ContainerID: "cp"}))
		time.Sleep(120 * time.Millisecond)
		for _, e := range b.Drain() {
			_, failed := e.(RendezvousFailed)
			require.False(t, failed, "no failure once every waited-for task started")
		}
		require.True(t, mayStart(b, task(taskspec.Worker, 0)))
	})
}
