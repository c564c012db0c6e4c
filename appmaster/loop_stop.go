package appmaster

import (
	"context"
	"github.com/tfyarn/tfyarn/appmaster/core"
	"time"

	"github.com/tfyarn/tfyarn/yarnpb/hadoopyarn"
)

// hardStop is a graceful stop the loop follows up with stopContainers
// unless the container ended first.
type hardStop struct {
	stop core.Stop
	at   time.Time
}

// stop carries out the machine's Stop actions. With launchers, a stop is
// graceful first: the task's launcher sends its program SIGTERM (and
// SIGKILL after its own grace), reports the exit and ends, so the program
// can flush and the AM learns the end at once. The NodeManager's
// stopContainers follows StopGrace later for containers still alive (a
// launcher still localizing, or hung). Stops that come with the job's end
// are immediate: the job is decided, and the launchers were told anyway.
func (l *loop) stop(ctx context.Context, stops []core.Stop, final bool) {
	if final && l.cfg.Launchers != nil {
		l.cfg.Launchers.StopAll("the job is over")
	}
	if l.cfg.Launchers == nil || final {
		l.stopContainers(ctx, stops)
		return
	}
	at := l.cfg.Now().Add(l.cfg.StopGrace)
	for _, s := range stops {
		l.cfg.Logf("asking %s in %s to end: %s", s.Task, s.Container.ID, s.Reason)
		l.cfg.Launchers.Stop(s.Task, s.Reason)
		l.hardStops = append(l.hardStops, hardStop{stop: s, at: at})
	}
}

// escalateStops stops the containers whose graceful stop is overdue.
func (l *loop) escalateStops(ctx context.Context) {
	now := l.cfg.Now()
	var due []core.Stop
	kept := l.hardStops[:0]
	for _, h := range l.hardStops {
		t, ok := l.m.Task(h.stop.Task)
		switch {
		case !ok || !t.State.Live() || t.Container.ID != h.stop.Container.ID:
			// Over already: nothing to follow up.
		case now.Before(h.at):
			kept = append(kept, h)
		default:
			h.stop.Reason = "still running " + l.cfg.StopGrace.String() + " after it was asked to end"
			due = append(due, h.stop)
		}
	}
	l.hardStops = kept
	l.stopContainers(ctx, due)
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
		l.cfg.Observe(Snapshot{Tasks: l.m.Tasks(), Finish: f})
	}
}
