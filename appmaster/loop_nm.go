package appmaster

import (
	"context"
	"fmt"
	"sort"

	"github.com/tfyarn/tfyarn/yarn"
	"github.com/tfyarn/tfyarn/yarnpb/hadoopyarn"
)

// launch starts the Launch actions, one startContainers call per node, and
// steps the machine with each container's outcome.
func (l *loop) launch(ctx context.Context, launches []Launch) {
	byNode := map[string][]Launch{}
	for _, ln := range launches {
		byNode[ln.Container.NodeID] = append(byNode[ln.Container.NodeID], ln)
	}
	for _, node := range sortedNodes(byNode) {
		group := byNode[node]
		reqs := make([]yarn.StartRequest, 0, len(group))
		for _, ln := range group {
			reqs = append(reqs, yarn.StartRequestFor(l.containers[ln.Container.ID], l.cfg.LaunchContext(ln)))
		}
		cctx, cancel := context.WithTimeout(ctx, l.cfg.CallTimeout)
		res, err := l.cfg.NM.StartContainers(cctx, node, reqs)
		cancel()
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
				l.m.Step(StartFailed{ID: id, Reason: err.Error()})
			default:
				l.out.Started++
				l.m.Step(ContainerStarted{ID: id})
				l.cfg.Logf("%s started in %s on %s", ln.Task, id, node)
				l.noteStarted(ln)
			}
		}
	}
}

// noteStarted records when every task has been started once, the figure
// the benchmark reports.
func (l *loop) noteStarted(ln Launch) {
	l.started[ln.Task] = true
	if l.out.AllStartedAt.IsZero() && len(l.started) == l.cfg.Job.TaskCount() {
		l.out.AllStartedAt = l.cfg.Now()
	}
}

// stop stops containers, best effort: their ends come back from the RM as
// completions, or not at all once the job is decided (unregistering ends
// them anyway).
func (l *loop) stop(ctx context.Context, stops []Stop) {
	byNode := map[string][]*hadoopyarn.ContainerIdProto{}
	for _, s := range stops {
		if c := l.containers[s.Container.ID]; c != nil {
			byNode[s.Container.NodeID] = append(byNode[s.Container.NodeID], c.GetId())
			l.cfg.Logf("stopping %s in %s: %s", s.Task, s.Container.ID, s.Reason)
		}
	}
	for _, node := range sortedNodes(byNode) {
		// Stopping matters most when the AM itself is being terminated.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.CallTimeout)
		_, failed, err := l.cfg.NM.StopContainers(cctx, node, byNode[node])
		cancel()
		if err != nil {
			l.cfg.Logf("stopping containers on %s: %v", node, err)
		}
		for _, f := range failed {
			l.cfg.Logf("stopping: %v", f)
		}
	}
}

// finish unregisters with the machine's verdict. It uses a context of its
// own: a cancelled ctx (SIGTERM) is exactly when the final status matters.
func (l *loop) finish(ctx context.Context, f Finish) (LoopResult, error) {
	l.out.Finish = f
	l.out.Tasks = l.m.Tasks()
	l.cfg.Logf("job %s: %s", f.Status, f.Diagnostics)
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.FinishTimeout)
	defer cancel()
	if l.cfg.BeforeUnregister != nil {
		l.cfg.BeforeUnregister(fctx, f)
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
