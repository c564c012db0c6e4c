package core

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/success"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The allocation deadline: a task waiting for a container (from the AM's
// registration, or from its restart) longer than Config.AllocTimeout will
// most likely never get one (the cluster is too small or too busy for its
// shape, its label has no capacity for the queue). A chief, worker or ps
// task that waits that long fails the job at once, since gang semantics
// keep every other task from starting its program without it. An evaluator
// or TensorBoard task that waits that long is given up: its ask is
// withdrawn and it is recorded as failed ("never allocated"), which the
// TensorFlow policy reports without failing the job and AllSucceed counts
// as a failure. Either way nothing waits for a container forever.

// allocDeadline applies the deadline at the machine's current time.
func (m *Machine) allocDeadline() {
	if m.allocTimeout <= 0 || m.now.IsZero() || m.restarting != nil {
		return
	}
	// A wait (re)starts at the machine's time, so no deadline falls before
	// the earliest one the last pass saw unless a wait has restarted since.
	if !m.allocScan && (m.allocNext.IsZero() || m.now.Before(m.allocNext)) {
		return
	}
	m.allocScan, m.allocNext = false, time.Time{}
	var fatal, sideCars []*TaskStatus
	for _, t := range m.tasks {
		if t.State != TaskPending || t.RequestedAt.IsZero() || t.overdue {
			continue
		}
		if m.now.Sub(t.RequestedAt) < m.allocTimeout {
			if due := t.RequestedAt.Add(m.allocTimeout); m.allocNext.IsZero() || due.Before(m.allocNext) {
				m.allocNext = due
			}
			continue
		}
		if t.Task.Type.InCluster() {
			fatal = append(fatal, t)
		} else {
			sideCars = append(sideCars, t)
		}
	}
	if len(fatal) > 0 && m.elastic {
		fatal = m.elasticLate(fatal)
	}
	if len(fatal) > 0 {
		diag := UnallocatedDiagnostics(m.groupSpecs(), statuses(fatal), m.allocTimeout, m.clusterOffers)
		if m.elastic {
			diag = m.elasticShort() + diag
		}
		m.finish(Failed, m.excludedNote(m.startAfterNote(fatal, m.spreadNote(fatal, diag))))
		return
	}
	for _, t := range sideCars {
		m.setState(t, TaskFailed)
		t.unallocated = true
		m.unallocatedFailed++
		t.ExitStatus = ExitInvalid
		t.EndedAt = m.now
		m.ends++
		t.EndOrder = m.ends
		t.Failure = unallocatedSentence(m.groupSpecs(), []TaskStatus{*t}, fmt.Sprintf("was not allocated a container within %s", m.allocTimeout))
	}
}

// spreadNote adds to the diagnostics of unallocated tasks the placement
// constraint that kept them waiting, when one of them is spread: a node
// with room is not enough, it must hold none of the spread tasks yet.
func (m *Machine) spreadNote(late []*TaskStatus, diagnostics string) string {
	for _, t := range late {
		if a, ok := m.job.AffinityOf(t.Task.Type); ok {
			need := fmt.Sprintf("a node with room that runs a %s task", a.Other)
			if a.Apart {
				need = fmt.Sprintf("a node with room that runs no %s task", a.Other)
			}
			return strings.TrimSuffix(diagnostics, "; "+unallocatedAdvice) +
				fmt.Sprintf("; placement constraint %s: each needs %s; ask for less, drop %s or raise --alloc-timeout",
					a.Text(), need, affinityFlagName(a))
		}
	}
	if m.spreadText == "" {
		return diagnostics
	}
	for _, t := range late {
		if m.job.Spreads(t.Task.Type) {
			return strings.TrimSuffix(diagnostics, "; "+unallocatedAdvice) +
				fmt.Sprintf("; placement constraint %s: each of the %d spread tasks needs a node of its own; ask for fewer tasks, drop --spread or raise --alloc-timeout",
					m.spreadText, m.job.SpreadCount())
		}
	}
	return diagnostics
}

// unallocatedAtRendezvous explains a failed rendezvous by the cluster tasks
// waiting for a container: those that never got one, with their shape, and
// those whose restart (an in-place replacement's included) had none yet;
// "" when none waits.
func (m *Machine) unallocatedAtRendezvous() string {
	var never []TaskStatus
	var restarting []success.TaskStatus
	for _, t := range m.tasks {
		switch {
		case !t.Task.Type.InCluster() || t.State != TaskPending:
		case t.Attempt == 0:
			never = append(never, *t)
		default:
			restarting = append(restarting, policyStatus(t))
		}
	}
	var lines []string
	if len(never) > 0 {
		lines = append(lines, unallocatedSentence(m.groupSpecs(), never, "never got a container"))
	}
	return strings.Join(append(lines, success.WaitingLines(restarting, "")...), "; ")
}

// groupSpecs are the groups' shapes, each with the label its asks land
// on: its own, or the queue's default for asks that name none.
func (m *Machine) groupSpecs() map[taskspec.TaskType]groupShape {
	out := map[taskspec.TaskType]groupShape{}
	for _, g := range m.groups {
		if g.task != nil {
			continue // an in-place replacement's ask: the group's shape
		}
		label := g.nodeLabel
		if label == "" {
			label = m.defaultLabel
		}
		out[g.spec.Type] = groupShape{Resources: g.spec.Resources, NodeLabel: label}
	}
	return out
}

// WaitNotice is how long a task waits for a container before Waiting
// says so: a healthy cluster allocates within a heartbeat or two.
const WaitNotice = 5 * time.Second

// Waiting says, per task group, what the tasks waiting for a container
// longer than WaitNotice wait for and where, with what the cluster offers
// the queue there: "waiting for 1 worker container (1 vcores, 1024 MiB, 1
// GPUs, label \"gpu\"): queue ml-gpu on nodes labelled gpu: 1 node, the
// largest with 8 vcores, 8192 MiB, 2 GPUs; the job fails if it is not
// allocated within 5m0s (--alloc-timeout)". Empty when nothing waits that
// long, or while a restart's stops are under way.
func (m *Machine) Waiting() []string {
	if m.phase != PhaseRunning || m.restarting != nil || m.now.IsZero() {
		return nil
	}
	waiting := map[taskspec.TaskType]int{}
	var overdue []*TaskStatus
	for _, t := range m.tasks {
		switch {
		case t.State != TaskPending || t.RequestedAt.IsZero():
		case t.overdue:
			overdue = append(overdue, t)
		case m.now.Sub(t.RequestedAt) >= WaitNotice:
			waiting[t.Task.Type]++
		}
	}
	if len(waiting) == 0 && len(overdue) == 0 {
		return nil
	}
	shapes := m.groupSpecs()
	var out []string
	for _, t := range overdue {
		out = append(out, m.overdueWaiting(t, shapes[t.Task.Type]))
	}
	for _, typ := range taskspec.TaskTypes() {
		n := waiting[typ]
		if n == 0 {
			continue
		}
		noun := "container"
		if n > 1 {
			noun = "containers"
		}
		sh := shapes[typ]
		line := fmt.Sprintf("waiting for %d %s %s (%s)", n, typ, noun, Shape(sh.Resources, sh.NodeLabel))
		if offer := trimOffer(m.clusterOffers[sh.NodeLabel]); offer != "" {
			line += ": " + offer
		}
		switch {
		case m.allocTimeout <= 0:
		case m.elastic && typ == taskspec.Worker:
			line += fmt.Sprintf("; the job fails if fewer than --min-workers %d workers have a container when its wait reaches %s (--alloc-timeout), else goes on without it", m.minWorkers, m.allocTimeout)
		default:
			line += fmt.Sprintf("; the job fails if it is not allocated within %s (--alloc-timeout)", m.allocTimeout)
		}
		out = append(out, line)
	}
	return out
}

// trimOffer is a ClusterOffers entry to quote mid-sentence.
func trimOffer(offer string) string {
	return strings.TrimRight(strings.TrimSpace(offer), ".")
}

func statuses(ts []*TaskStatus) []TaskStatus {
	out := make([]TaskStatus, len(ts))
	for i, t := range ts {
		out[i] = *t
	}
	return out
}

// groupShape is what a task group asks the RM for.
type groupShape struct {
	Resources taskspec.Resources
	NodeLabel string
}

// Shape describes a container shape for users: "1 vcores, 8192 MiB,
// label \"\"", with GPUs when asked for.
func Shape(r taskspec.Resources, label string) string {
	s := fmt.Sprintf("%d vcores, %d MiB", r.VCores, r.MemoryMiB)
	if r.GPUs > 0 {
		s += fmt.Sprintf(", %d GPUs", r.GPUs)
	}
	return s + fmt.Sprintf(", label %q", label)
}

// UnallocatedDiagnostics is the job's diagnostics when the tasks in late
// were not allocated within timeout: per task group the tasks, their shape
// and what the cluster offers for that label (offers, by label, "" for
// nodes without one), then what to do.
func UnallocatedDiagnostics(shapes map[taskspec.TaskType]groupShape, late []TaskStatus, timeout time.Duration, offers map[string]string) string {
	var parts []string
	for _, typ := range taskspec.TaskTypes() {
		var ofType []TaskStatus
		for _, t := range late {
			if t.Task.Type == typ {
				ofType = append(ofType, t)
			}
		}
		if len(ofType) == 0 {
			continue
		}
		verb := "was"
		if len(ofType) > 1 {
			verb = "were"
		}
		part := unallocatedSentence(shapes, ofType, fmt.Sprintf("%s not allocated within %s", verb, timeout))
		if offer := trimOffer(offers[shapes[typ].NodeLabel]); offer != "" {
			part += ": " + offer
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ") + "; " + unallocatedAdvice
}

// unallocatedSentence is "worker:1, worker:2 (1 vcores, 8192 MiB, label
// \"\") <what>" for tasks of one or more groups.
func unallocatedSentence(shapes map[taskspec.TaskType]groupShape, tasks []TaskStatus, what string) string {
	var parts []string
	for _, typ := range taskspec.TaskTypes() {
		var ids []taskspec.TaskID
		for _, t := range tasks {
			if t.Task.Type == typ {
				ids = append(ids, t.Task)
			}
		}
		if len(ids) > 0 {
			sh := shapes[typ]
			parts = append(parts, fmt.Sprintf("%s (%s)", success.JoinIDs(ids), Shape(sh.Resources, sh.NodeLabel)))
		}
	}
	return strings.Join(parts, ", ") + " " + what
}

const unallocatedAdvice = "ask for less or raise --alloc-timeout"

// RequestRefused: the RM refused the resource requests an allocate call
// carried (InvalidResourceRequestException,
// InvalidLabelResourceRequestException, ...). The same asks would be
// refused again, so the job fails at once with the RM's reason.
type RequestRefused struct {
	Asks      []Ask  // the asks the refused call carried
	Exception string // the Java exception class (full or short)
	Message   string // its message
}

func (RequestRefused) isEvent() {}

// Messages of Hadoop's SchedulerUtils, for RefusalDiagnostics.
var (
	refusedNoSuchLabel = regexp.MustCompile(`cluster do not contain\s*,?\s*label\s*=\s*(\S*)`)
	refusedQueueLabel  = regexp.MustCompile(`queue=(\S+) doesn't have permission to access all labels in resource request\. labelExpression of resource request=(\S*?)\. Queue labels=(.*)$`)
)

// RefusalDiagnostics says in plain words which request the RM refused and
// why: `the ResourceManager refused the worker request: label
// "nosuchlabel" does not exist on the cluster
// (InvalidLabelResourceRequestException)`.
func RefusalDiagnostics(e RequestRefused) string {
	class := e.Exception[strings.LastIndex(e.Exception, ".")+1:]
	msg := strings.Join(strings.Fields(e.Message), " ")
	reason, label := msg, ""
	hasLabel := false
	if m := refusedNoSuchLabel.FindStringSubmatch(msg); m != nil {
		label, hasLabel = m[1], true
		reason = fmt.Sprintf("label %q does not exist on the cluster", label)
	} else if strings.Contains(msg, "placement-constraints.handler") {
		reason = "its yarn.resourcemanager.placement-constraints.handler does not place SchedulingRequests, which --spread, --colocate and --apart send; the cluster's administrator must set it to scheduler, or run without them"
	} else if m := refusedQueueLabel.FindStringSubmatch(msg); m != nil {
		label, hasLabel = m[2], true
		allowed := strings.TrimSpace(m[3])
		if allowed == "" {
			allowed = "none"
		}
		reason = fmt.Sprintf("queue %s may not use label %q (labels it may use: %s)", m[1], label, allowed)
	}
	if reason == "" {
		reason = "no reason given"
	}
	const maxReason = 500
	if len(reason) > maxReason {
		reason = strings.ToValidUTF8(reason[:maxReason], "") + "…"
	}
	var types []string
	seen := map[taskspec.TaskType]bool{}
	add := func(a Ask) {
		if !seen[a.TaskType] {
			seen[a.TaskType] = true
			types = append(types, string(a.TaskType))
		}
	}
	for _, a := range e.Asks {
		if hasLabel && a.NodeLabel == label {
			add(a)
		}
	}
	if len(types) == 0 {
		for _, a := range e.Asks {
			if a.Count > 0 {
				add(a)
			}
		}
	}
	what := "resource request"
	switch len(types) {
	case 0:
	case 1:
		what = types[0] + " request"
	default:
		what = strings.Join(types[:len(types)-1], ", ") + " and " + types[len(types)-1] + " requests"
	}
	if class == "" {
		return fmt.Sprintf("the ResourceManager refused the %s: %s", what, reason)
	}
	return fmt.Sprintf("the ResourceManager refused the %s: %s (%s)", what, reason, class)
}

func affinityFlagName(a taskspec.Affinity) string {
	if a.Apart {
		return "--apart"
	}
	return "--colocate"
}
