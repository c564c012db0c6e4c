package appmaster

import (
	"context"
	"fmt"
	"sort"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// launch starts the Launch actions, one startContainers call per node, and
// steps the machine with each container's outcome. A kill (ctx cancelled)
// before or during a call becomes KillRequested, not start failures: the
// calls it cut short and the ones never made are stopped by the machine's
// Finish.
func (l *loop) launch(ctx context.Context, launches []core.Launch) {
	byNode := map[string][]core.Launch{}
	for _, ln := range launches {
		byNode[ln.Container.NodeID] = append(byNode[ln.Container.NodeID], ln)
	}
	for _, node := range sortedNodes(byNode) {
		group := byNode[node]
		if l.interrupted(ctx, "while starting containers") {
			for _, ln := range group {
				l.unsent[ln.Container.ID] = true
			}
			continue
		}
		reqs := make([]yarn.StartRequest, 0, len(group))
		for _, ln := range group {
			if l.cfg.Launchers != nil {
				l.cfg.Launchers.Assign(ln.Task, ln.Container.ID)
			}
			reqs = append(reqs, yarn.StartRequestFor(l.containers[ln.Container.ID], l.cfg.LaunchContext(ln)))
		}
		cctx, cancel := context.WithTimeout(ctx, l.cfg.CallTimeout)
		res, err := l.cfg.NM.StartContainers(cctx, node, reqs)
		cancel()
		if l.interrupted(ctx, "while starting containers") {
			l.cfg.Logf("startContainers on %s interrupted: %v", node, err)
			continue
		}
		l.tick()
		l.fastUntil = l.cfg.Now().Add(fastWindow)
		outcome := map[string]error{}
		if err != nil {
			for _, ln := range group {
				outcome[ln.Container.ID] = err
			}
		} else {
			for _, id := range res.Started {
				outcome[yarn.FormatContainerID(id)] = nil
			}
			for _, f := range res.Failed {
				outcome[yarn.FormatContainerID(f.ContainerID)] = f
			}
		}
		for _, ln := range group {
			id := ln.Container.ID
			err, answered := outcome[id]
			switch {
			case !answered:
				err = fmt.Errorf("yarn: startContainers %s: the NodeManager said nothing about %s", node, id)
				fallthrough
			case err != nil:
				l.cfg.Logf("%s failed to start in %s: %v", ln.Task, id, err)
				l.m.Step(core.StartFailed{ID: id, Reason: err.Error()})
			default:
				l.out.Started++
				l.m.Step(core.ContainerStarted{ID: id})
				l.cfg.Logf("%s started in %s on %s", ln.Task, id, node)
				l.noteStarted(ln)
			}
		}
	}
}

// noteStarted records when every task has been started once, the figure
// the benchmark reports.
func (l *loop) noteStarted(ln core.Launch) {
	l.started[ln.Task] = true
	if l.out.AllStartedAt.IsZero() && len(l.started) == l.cfg.Job.TaskCount() {
		l.out.AllStartedAt = l.cfg.Now()
	}
}

// finish unregisters with the machine's verdict. It uses a context of its
// own: a cancelled ctx (SIGTERM) is exactly when the final status matters.
func (l *loop) finish(ctx context.Context, f core.Finish) (LoopResult, error) {
	l.out.Tasks = l.m.Tasks()
	l.out.Restarts = l.m.Restarts()
	var tail func(core.TaskStatus) []string
	if l.cfg.Launchers != nil {
		tail = func(t core.TaskStatus) []string { return l.cfg.Launchers.StderrTail(t.Task, t.Container.ID) }
	}
	f.Diagnostics = core.WithStderr(f.Diagnostics, l.out.Tasks, tail)
	l.out.Finish = f
	l.cfg.Logf("job %s: %s", f.Status, f.Diagnostics)
	l.observe(&f)
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.FinishTimeout)
	defer cancel()
	if l.cfg.BeforeUnregister != nil {
		l.cfg.BeforeUnregister(fctx, f)
	}
	if f.HandOver {
		l.cfg.Logf("attempt %d of %d stopped from outside: not unregistering, so that YARN may start the next attempt (preemption, a NodeManager shutting down; after a kill YARN ends the application itself)", max(l.cfg.Attempt, 1), l.cfg.Attempts)
		return l.out, nil
	}
	if err := l.cfg.RM.Finish(fctx, finalStatusProto(f.Status), f.Diagnostics, ""); err != nil {
		return l.out, fmt.Errorf("appmaster: unregistering: %w", err)
	}
	l.out.Unregistered = true
	l.cfg.Logf("unregistered (%d containers allocated, %d started, %d released unused)", l.out.Allocated, l.out.Started, l.out.Released)
	return l.out, nil
}

func sortedNodes[V any](m map[string]V) []string {
	nodes := make([]string, 0, len(m))
	for n := range m {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	return nodes
}
