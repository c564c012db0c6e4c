package appmaster

import (
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The ResourceManager's settings that say how long its scheduler waits
// between announcing a preemption and the kill (milliseconds). They are
// the RM's, not the AM's: the client ships them from its yarn-site
// (contract.ShipConf) when it states them.
const (
	ConfSchedulerClass          = "yarn.resourcemanager.scheduler.class"
	ConfCapacityPreemptionWait  = "yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill"
	ConfFairPreemptionWait      = "yarn.scheduler.fair.waitTimeBeforeKill"
	fairSchedulerClassSubstring = "FairScheduler"
)

// PreemptionWait is how long YARN's scheduler waits before killing a
// container it announced it would preempt, as conf says: the
// FairScheduler's waitTimeBeforeKill when conf names the FairScheduler,
// else the CapacityScheduler's max_wait_before_kill; a missing or bad
// value gives taskspec.DefaultPreemptionWait (Hadoop's default for both).
func PreemptionWait(conf *hadoopconf.Config) time.Duration {
	key := ConfCapacityPreemptionWait
	if class, _ := conf.Get(ConfSchedulerClass); strings.Contains(class, fairSchedulerClassSubstring) {
		key = ConfFairPreemptionWait
	}
	d, err := conf.GetDuration(key, time.Millisecond, taskspec.DefaultPreemptionWait)
	if err != nil || d <= 0 {
		return taskspec.DefaultPreemptionWait
	}
	return d
}

// preemptionEvent reads an allocate response's PreemptionMessage; ok is
// false when it carries none. since is when the allocate call before it
// was sent.
func preemptionEvent(msg *hadoopyarn.PreemptionMessageProto, since time.Time) (core.PreemptionWarned, bool) {
	var ev core.PreemptionWarned
	for _, c := range msg.GetStrictContract().GetContainer() {
		ev.Strict = append(ev.Strict, yarn.FormatContainerID(c.GetId()))
	}
	for _, c := range msg.GetContract().GetContainer() {
		ev.Negotiable = append(ev.Negotiable, yarn.FormatContainerID(c.GetId()))
	}
	ev.Since = since
	return ev, len(ev.Strict)+len(ev.Negotiable) > 0
}

// logPreemption says what the ResourceManager announced, container by
// container, naming each one's task: the line's timestamp is when the
// announcement reached the AM.
func (l *loop) logPreemption(ev core.PreemptionWarned) {
	var parts []string
	name := func(id, contract string) string {
		who := "no task's"
		if t, ok := l.m.TaskOfContainer(id); ok {
			who = t.Task.String() + ", " + t.State.String()
		}
		return id + " (" + who + "; " + contract + ")"
	}
	for _, id := range ev.Strict {
		parts = append(parts, name(id, "strict contract"))
	}
	for _, id := range ev.Negotiable {
		parts = append(parts, name(id, "negotiable contract"))
	}
	l.cfg.Logf("the ResourceManager will preempt %s", strings.Join(parts, ", "))
}

// warn passes the machine's warnings to the tasks' launchers. A
// preemption's is logged task by task; idle GPUs' once (the machine's
// note said what), naming the tasks warned.
func (l *loop) warn(ws []core.Warning) {
	var idle []string
	for _, w := range ws {
		if w.Kind == core.WarnPreemption {
			l.cfg.Logf("warning %s in %s: YARN may kill it from %s on (in %s): %s", w.Task, w.Container.ID,
				w.Deadline.Format("15:04:05.000"), w.Deadline.Sub(l.cfg.Now()).Round(time.Millisecond), w.Reason)
		} else {
			idle = append(idle, w.Task.String())
		}
		if l.cfg.Launchers != nil {
			l.cfg.Launchers.Warn(w)
		}
	}
	if len(idle) > 0 {
		l.cfg.Logf("warning %s of the idle GPUs (their warnings files)", strings.Join(idle, ", "))
	}
}
