package tasklogs

import (
	"context"
	"time"

	"github.com/tfyarn/tfyarn/internal/tasklogs/nodemanager"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// TaskFollower follows some tasks' stdout and stderr while a job runs:
// `tfyarn run` shows the deciding task's output with it.
type TaskFollower struct {
	rm          *yarn.ApplicationClient
	callTimeout time.Duration
	set         *followSet
	http        map[string]string
	cancel      context.CancelFunc
	done        chan struct{}
}

// finishTimeout bounds the last read of an ended task's logs.
const finishTimeout = 5 * time.Second

// FollowTasks starts following the containers of user's job, polling every
// interval (default 1 s); rm names the NodeManagers' web addresses, each
// call bounded by callTimeout. Add names the tasks, Finish reads an ended
// task's last lines, Close stops.
func FollowTasks(ctx context.Context, rm *yarn.ApplicationClient, user string, callTimeout time.Duration, out FollowOutput, notes func(string), interval time.Duration) *TaskFollower {
	if interval <= 0 {
		interval = time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	nm := nodemanager.New(user)
	t := &TaskFollower{rm: rm, callTimeout: callTimeout, set: newFollowSet(nm, nil, 0, out, notes), http: map[string]string{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(t.done)
		defer nm.Close()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				t.set.poll(ctx)
			}
		}
	}()
	return t
}

// Add starts following a task's container on node (once per container);
// a task without a container or node yet is left for a later Add.
func (t *TaskFollower) Add(ctx context.Context, task, container, node string) error {
	if container == "" || node == "" {
		return nil
	}
	addr, err := nodeHTTP(ctx, t.rm, t.callTimeout, t.http, node)
	if err != nil {
		return err
	}
	t.set.add(taskContainer{task: task, container: container, node: node}, addr)
	return nil
}

// Finish prints the last lines of an ended task's container.
func (t *TaskFollower) Finish(ctx context.Context, container string) {
	ctx, cancel := context.WithTimeout(ctx, finishTimeout)
	defer cancel()
	t.set.finish(ctx, container)
}

// Close stops following and flushes what is left.
func (t *TaskFollower) Close() {
	t.cancel()
	<-t.done
	t.set.close()
}
