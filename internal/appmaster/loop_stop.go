package appmaster

import (
	"context"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// stop carries out the machine's Stop actions: a graceful one through the
// task's launcher (it sends its program SIGTERM, and SIGKILL after its own
// grace, reports the exit and ends, so the program can flush and the AM
// learns the end at once), a hard one with the NodeManager's
// stopContainers. When to escalate from one to the other is the machine's
// decision (core.Config.ContainerStopGrace). With the job's end, every launcher is
// told as well: those still waiting for the cluster spec give up.
func (l *loop) stop(ctx context.Context, stops []core.Stop, final bool) {
	if final && l.cfg.Launchers != nil {
		l.cfg.Launchers.StopAll("the job is over")
	}
	var hard []core.Stop
	for _, s := range stops {
		if s.Hard || l.cfg.Launchers == nil {
			hard = append(hard, s)
			continue
		}
		l.cfg.Logf("asking %s in %s to end: %s", s.Task, s.Container.ID, s.Reason)
		l.cfg.Launchers.Stop(s.Task, s.Reason)
	}
	l.stopContainers(ctx, hard)
}

// stopContainers stops containers, best effort: their ends come back from
// the RM as completions, or not at all once the job is decided
// (unregistering ends them anyway).
func (l *loop) stopContainers(ctx context.Context, stops []core.Stop) {
	byNode := map[string][]*hadoopyarn.ContainerIdProto{}
	for _, s := range stops {
		if l.unsent[s.Container.ID] {
			continue // never started; unregistering releases it
		}
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

// observe hands the job's state to the status page.
func (l *loop) observe(f *core.Finish) {
	if l.cfg.Observe != nil {
		l.cfg.Observe(Snapshot{Tasks: l.m.Tasks(), Finish: f, Restarts: l.m.Restarts(), Record: l.m.RestartRecord(), Waiting: l.m.Waiting(), GPUIdle: l.m.GPUIdleWarning()})
	}
}
