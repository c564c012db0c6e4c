package rendezvous

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// The start order (BoardConfig.StartAfter): a task of a waiting type gets
// the spec, and so starts its program, only once every task of the types
// it waits for has started. A task counts as started when its launcher,
// from the container registered for it, waits for stop orders (it does
// so right after starting the program) or reports an exit; an adopted
// task runs already. Restarts (Reset) forget who started.

// mayStartLocked reports whether task's program may start now, and if not,
// the tasks it waits for. Called with b.mu held.
func (b *Board) mayStartLocked(task taskspec.TaskID) (bool, []taskspec.TaskID) {
	var waits []taskspec.TaskID
	for _, dep := range b.startAfter.Waits(task.Type) {
		for _, g := range b.groups {
			if g.Type != dep {
				continue
			}
			for _, id := range g.TaskIDs() {
				if !b.started[id] {
					waits = append(waits, id)
				}
			}
		}
	}
	return len(waits) == 0, waits
}

// waitStartLocked returns the spec once task may start, for the rendezvous
// generation gen. Called with b.mu held; returns with it held.
func (b *Board) waitStartLocked(ctx context.Context, task taskspec.TaskID, gen int) (taskspec.ClusterSpec, error) {
	for {
		if b.gen != gen {
			return nil, fmt.Errorf("%w: the cluster restarted", ErrRendezvousFailed)
		}
		if b.startFailed != nil {
			return nil, fmt.Errorf("%w: %v", ErrRendezvousFailed, b.startFailed)
		}
		if ok, _ := b.mayStartLocked(task); ok {
			// The published spec itself, no copy: the Board replaces it whole
			// when it changes, and 5,000 launchers woken at once by its
			// publication would otherwise hold 5,000 copies of it
			// (bench/results/scale-sim.md).
			return b.spec, nil
		}
		wake := b.startWake
		b.waiting++
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
		}
		b.mu.Lock()
		b.waiting--
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// markStartedLocked records that task's program started and wakes the
// tasks waiting for it. Called with b.mu held.
func (b *Board) markStartedLocked(task taskspec.TaskID) {
	if b.started[task] {
		return
	}
	b.started[task] = true
	close(b.startWake)
	b.startWake = make(chan struct{})
}

// armStartTimerLocked bounds the wait for the waited-for tasks' start by
// the registration timeout, from the spec's publication. Called with b.mu
// held.
func (b *Board) armStartTimerLocked() {
	if len(b.startAfter) == 0 || b.timeout <= 0 {
		return
	}
	gen := b.gen
	b.startTimer = time.AfterFunc(b.timeout, func() { b.expireStart(gen) })
}

// expireStart ends the rendezvous when some task still waits for others
// to start once the timeout passed: its launcher would wait in vain.
func (b *Board) expireStart(gen int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gen != gen || b.startFailed != nil {
		return
	}
	if note := b.startWaitsLocked(); note != "" {
		b.startFailed = fmt.Errorf("the start order was not met within %s: %s", b.timeout, note)
		b.emit(RendezvousFailed{Err: b.startFailed})
		close(b.startWake)
		b.startWake = make(chan struct{})
	}
}

// startWaitsLocked says which tasks of a waiting type wait for which
// tasks not started yet, e.g. "worker waits for ps:1 to start
// (--start-after worker=ps)", or "" when none does. Called with b.mu held.
func (b *Board) startWaitsLocked() string {
	var notes []string
	for _, t := range taskspec.TaskTypes() {
		if _, in := b.groupOf(t); !in || len(b.startAfter.Waits(t)) == 0 {
			continue
		}
		ok, waits := b.mayStartLocked(taskspec.TaskID{Type: t})
		if ok {
			continue
		}
		names := make([]string, len(waits))
		for i, id := range waits {
			names[i] = id.String()
		}
		var pairs []string
		for _, d := range b.startAfter.Waits(t) {
			pairs = append(pairs, string(t)+"="+string(d))
		}
		notes = append(notes, fmt.Sprintf("%s waits for %s to start (--start-after %s)", t, strings.Join(names, ", "), strings.Join(pairs, ",")))
	}
	return strings.Join(notes, "; ")
}

func (b *Board) groupOf(t taskspec.TaskType) (taskspec.TaskGroup, bool) {
	for _, g := range b.groups {
		if g.Type == t && g.Instances > 0 {
			return g, true
		}
	}
	return taskspec.TaskGroup{}, false
}

// resetStartsLocked forgets the started tasks for a new generation.
// Called with b.mu held.
func (b *Board) resetStartsLocked() {
	b.started = map[taskspec.TaskID]bool{}
	b.startFailed = nil
	close(b.startWake)
	b.startWake = make(chan struct{})
}
