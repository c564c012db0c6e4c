package rendezvous

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/taskspec"
)

func TestBoardPublishesOnlyWhenAllClusterTasksRegistered(t *testing.T) {
	b := newBoard(t, 0, group(taskspec.Chief, 1), group(taskspec.Worker, 2), group(taskspec.PS, 1), group(taskspec.Evaluator, 1))
	ctx := context.Background()
	regs := []Registration{reg(taskspec.Chief, 0, 1000), reg(taskspec.Worker, 0, 1001), reg(taskspec.PS, 0, 1003)}
	for _, r := range regs {
		require.NoError(t, b.Register(ctx, r))
		_, ok := b.Published()
		require.False(t, ok, "published before worker:1 registered")
	}
	require.Equal(t, []string{"worker:1"}, b.Missing())
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err := b.Spec(short, task(taskspec.Worker, 0))
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// The evaluator is not waited for.
	require.NoError(t, b.Register(ctx, reg(taskspec.Worker, 1, 1002)))
	spec, err := b.Spec(ctx, task(taskspec.Evaluator, 0))
	require.NoError(t, err)
	require.Equal(t, taskspec.ClusterSpec{
		taskspec.Chief:  {"node1.example.com:1000"},
		taskspec.Worker: {"node1.example.com:1001", "node1.example.com:1002"},
		taskspec.PS:     {"node1.example.com:1003"},
	}, spec)

	var kinds []string
	for _, e := range b.Drain() {
		switch e.(type) {
		case TaskRegistered:
			kinds = append(kinds, "registered")
		case SpecPublished:
			kinds = append(kinds, "published")
		}
	}
	require.Equal(t, []string{"registered", "registered", "registered", "registered", "published"}, kinds)
}

func TestBoardTimesOutWhenATaskNeverRegisters(t *testing.T) {
	b := newBoard(t, 50*time.Millisecond, group(taskspec.Worker, 3))
	ctx := context.Background()
	require.NoError(t, b.Register(ctx, reg(taskspec.Worker, 0, 1000)))
	require.NoError(t, b.Register(ctx, reg(taskspec.Worker, 2, 1002)))
	_, err := b.Spec(ctxTimeout(t, 5*time.Second), task(taskspec.Worker, 0))
	require.ErrorIs(t, err, ErrRendezvousFailed)
	require.ErrorContains(t, err, "missing worker:1")

	var failed []error
	for _, e := range b.Drain() {
		if f, ok := e.(RendezvousFailed); ok {
			failed = append(failed, f.Err)
		}
	}
	require.Len(t, failed, 1)
	// Late comers learn it at once.
	require.ErrorIs(t, b.Register(ctx, reg(taskspec.Worker, 1, 1001)), ErrRendezvousFailed)
}

func TestBoardReRegistration(t *testing.T) {
	b := newBoard(t, 0, group(taskspec.Worker, 2), group(taskspec.TensorBoard, 1))
	ctx := context.Background()
	w0 := reg(taskspec.Worker, 0, 1000)
	require.NoError(t, b.Register(ctx, w0))
	require.NoError(t, b.Register(ctx, w0), "a retry is accepted")
	require.Len(t, b.Drain(), 1, "and changes nothing")

	moved := w0
	moved.Port = 1500
	require.NoError(t, b.Register(ctx, moved), "before the spec, a new address replaces the old")
	require.NoError(t, b.Register(ctx, reg(taskspec.Worker, 1, 1001)))
	spec, _ := b.Published()
	require.Equal(t, "node1.example.com:1500", spec[taskspec.Worker][0])

	require.NoError(t, b.Register(ctx, moved), "the same address after the spec is fine")
	moved.Port = 1600
	require.ErrorIs(t, b.Register(ctx, moved), ErrConflict, "a new address after the spec is not")

	tb := reg(taskspec.TensorBoard, 0, 6006)
	require.NoError(t, b.Register(ctx, tb))
	tb.Port = 6007
	require.NoError(t, b.Register(ctx, tb), "tensorboard is not in the spec; it may move")
}

// An elastic job's spec (--min-workers 2 of 3) is out once two workers
// registered, the third's address empty; the third registers later and
// gets it with its address; a lost worker's replacement (a new container)
// registers at a new address after the spec and gets it too. A launcher's
// earlier copy is not changed under it.
func TestBoardElasticSpec(t *testing.T) {
	b, err := NewBoard(BoardConfig{Groups: []taskspec.TaskGroup{group(taskspec.Worker, 3)}, RegistrationTimeout: time.Minute, RequireAssignment: true, MinWorkers: 2})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	ctx := context.Background()
	w0, w1, w2 := reg(taskspec.Worker, 0, 1000), reg(taskspec.Worker, 1, 1001), reg(taskspec.Worker, 2, 1002)
	for _, r := range []Registration{w0, w1, w2} {
		b.Assign(r.Task, r.ContainerID)
	}
	require.NoError(t, b.Register(ctx, w0))
	_, ok := b.Published()
	require.False(t, ok, "one worker is fewer than --min-workers")
	require.NoError(t, b.Register(ctx, w1))
	before, err := b.Spec(ctx, w1.Task)
	require.NoError(t, err)
	require.Equal(t, []string{"node1.example.com:1000", "node1.example.com:1001", ""}, before[taskspec.Worker])

	require.NoError(t, b.Register(ctx, w2))
	spec, err := b.Spec(ctx, w2.Task)
	require.NoError(t, err)
	require.Equal(t, []string{"node1.example.com:1000", "node1.example.com:1001", "node1.example.com:1002"}, spec[taskspec.Worker])

	replacement := Registration{Task: w0.Task, Host: "node2.example.com", Port: 1700, ContainerID: "container_1_0001_01_000009"}
	require.ErrorIs(t, b.Register(ctx, replacement), ErrConflict, "only from the container assigned to it")
	b.Assign(w0.Task, replacement.ContainerID)
	require.NoError(t, b.Register(ctx, replacement))
	spec, err = b.Spec(ctx, w0.Task)
	require.NoError(t, err)
	require.Equal(t, []string{"node2.example.com:1700", "node1.example.com:1001", "node1.example.com:1002"}, spec[taskspec.Worker])
	require.Equal(t, []string{"node1.example.com:1000", "node1.example.com:1001", ""}, before[taskspec.Worker])
}

func TestBoardAssignedContainer(t *testing.T) {
	b := newBoard(t, 0, group(taskspec.Worker, 1))
	b.Assign(task(taskspec.Worker, 0), "container_A")
	r := reg(taskspec.Worker, 0, 1000)
	r.ContainerID = "container_B"
	require.ErrorIs(t, b.Register(context.Background(), r), ErrConflict)
	r.ContainerID = "container_A"
	require.NoError(t, b.Register(context.Background(), r))
}

func TestBoardUnknownTask(t *testing.T) {
	b := newBoard(t, 0, group(taskspec.Worker, 1))
	require.ErrorIs(t, b.Register(context.Background(), reg(taskspec.Worker, 1, 1)), ErrUnknownTask)
	_, err := b.Spec(context.Background(), task(taskspec.PS, 0))
	require.ErrorIs(t, err, ErrUnknownTask)
}

func TestBoardStopOrders(t *testing.T) {
	b := newBoard(t, 0, group(taskspec.Worker, 1), group(taskspec.PS, 1))
	ctx := context.Background()
	ps := reg(taskspec.PS, 0, 1000)
	require.NoError(t, b.Register(ctx, ps))

	got := make(chan StopOrder, 1)
	go func() {
		o, err := b.WaitStop(ctx, ps.Task, ps.ContainerID)
		if err == nil {
			got <- o
		}
	}()
	select {
	case <-got:
		t.Fatal("stopped before any order")
	case <-time.After(20 * time.Millisecond):
	}
	b.Stop(ps.Task, "chief finished")
	require.Equal(t, StopOrder{Reason: "chief finished"}, <-got)

	// An order for one container is not for the task's next container.
	_, err := b.WaitStop(ctxTimeout(t, 20*time.Millisecond), ps.Task, "container_other")
	require.ErrorIs(t, err, context.DeadlineExceeded)

	b.StopAll("job killed")
	o, err := b.WaitStop(ctx, task(taskspec.Worker, 0), "anything")
	require.NoError(t, err)
	require.Equal(t, "job killed", o.Reason)
}

func TestBoardExitReportsAreIdempotent(t *testing.T) {
	b := newBoard(t, 0, group(taskspec.Worker, 1))
	e := ExitReport{Task: task(taskspec.Worker, 0), ContainerID: "c1", ExitCode: 3, StderrTail: []string{"boom"}}
	require.NoError(t, b.ReportExit(context.Background(), e))
	require.NoError(t, b.ReportExit(context.Background(), e))
	ev := b.Drain()
	require.Len(t, ev, 1)
	require.Equal(t, TaskExited{Report: e}, ev[0])
	got, ok := b.Exit(e.Task)
	require.True(t, ok)
	require.Equal(t, 3, got.ExitCode)
}

func TestBoardFail(t *testing.T) {
	b := newBoard(t, 0, group(taskspec.Worker, 2))
	b.Fail(errors.New("job killed"))
	_, err := b.Spec(context.Background(), task(taskspec.Worker, 0))
	require.ErrorIs(t, err, ErrRendezvousFailed)
	require.ErrorContains(t, err, "job killed")
}

func TestBoardNotify(t *testing.T) {
	b := newBoard(t, 0, group(taskspec.Worker, 1))
	require.NoError(t, b.Register(context.Background(), reg(taskspec.Worker, 0, 1)))
	select {
	case <-b.Notify():
	default:
		t.Fatal("no notification")
	}
	require.Len(t, b.Drain(), 2) // registered, published
	require.Empty(t, b.Drain())
}

func TestBoardResetStartsANewGeneration(t *testing.T) {
	b := newBoard(t, 0, group(taskspec.Chief, 1), group(taskspec.Worker, 1))
	ctx := context.Background()
	// A launcher of the first generation waits for a spec that never comes
	// (worker:0 failed before registering); the restart releases it.
	require.NoError(t, b.Register(ctx, reg(taskspec.Chief, 0, 1000)))
	waiting := make(chan error, 1)
	go func() {
		_, err := b.Spec(ctx, task(taskspec.Chief, 0))
		waiting <- err
	}()
	require.Eventually(t, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.waiting == 1
	}, 5*time.Second, time.Millisecond, "the launcher never waited for the spec")
	b.Stop(task(taskspec.Chief, 0), "restarting")
	b.Reset()
	select {
	case err := <-waiting:
		require.ErrorIs(t, err, ErrRendezvousFailed)
		require.ErrorContains(t, err, "restarted")
	case <-time.After(5 * time.Second):
		t.Fatal("a launcher of the previous generation still waits for its spec")
	}
	_, ok := b.Published()
	require.False(t, ok)
	require.Equal(t, []string{"chief:0", "worker:0"}, b.Missing(), "registrations are forgotten")

	// The new generation meets at new addresses, with no stop order left.
	require.NoError(t, b.Register(ctx, reg(taskspec.Chief, 0, 2000)))
	require.NoError(t, b.Register(ctx, reg(taskspec.Worker, 0, 2001)))
	spec, err := b.Spec(ctx, task(taskspec.Worker, 0))
	require.NoError(t, err)
	require.Equal(t, taskspec.ClusterSpec{
		taskspec.Chief:  {"node1.example.com:2000"},
		taskspec.Worker: {"node1.example.com:2001"},
	}, spec)
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = b.WaitStop(short, task(taskspec.Chief, 0), "")
	require.ErrorIs(t, err, context.DeadlineExceeded, "the old stop order does not stop the new task")
}
