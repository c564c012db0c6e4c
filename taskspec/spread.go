package taskspec

import "fmt"

// SpreadAll is --spread's value for "no two of the cluster's tasks on one
// node": every chief, worker and ps task on a node of its own.
const SpreadAll = "all"

// Spread keeps tasks apart with YARN's placement constraints: the asks of
// the spread groups go to the RM as SchedulingRequests whose containers
// carry the allocation tag SpreadTag, under a NODE-scope anti-affinity
// constraint on that tag (no container of this application tagged so may
// already be on the node). The RM places them itself, so the constraint
// holds whatever else runs on the cluster; it needs
// yarn.resourcemanager.placement-constraints.handler=scheduler.

// Spreads reports whether the job's spread covers tasks of type t.
func (j Job) Spreads(t TaskType) bool {
	switch j.Spread {
	case "":
		return false
	case SpreadAll:
		return t.InCluster()
	}
	return TaskType(j.Spread) == t
}

// SpreadTag is the allocation tag of the spread tasks' containers, which
// their anti-affinity constraint names: "tfyarn-worker" for --spread
// worker, "tfyarn-cluster" for --spread all; empty when nothing is spread.
func (j Job) SpreadTag() string {
	switch j.Spread {
	case "":
		return ""
	case SpreadAll:
		return "tfyarn-cluster"
	}
	return "tfyarn-" + j.Spread
}

// SpreadCount is how many tasks the spread keeps apart.
func (j Job) SpreadCount() int {
	n := 0
	for _, g := range j.Tasks {
		if j.Spreads(g.Type) {
			n += g.Instances
		}
	}
	return n
}

// SpreadText says the constraint in words, for messages and status pages:
// "no two worker tasks on one node".
func (j Job) SpreadText() string {
	switch j.Spread {
	case "":
		return ""
	case SpreadAll:
		return "no two chief, worker or ps tasks on one node (--spread all)"
	}
	return fmt.Sprintf("no two %s tasks on one node (--spread %s)", j.Spread, j.Spread)
}

func (j Job) validateSpread(byType map[TaskType]bool) error {
	switch s := j.Spread; {
	case s == "" || s == SpreadAll:
		return nil
	case !TaskType(s).Known():
		return invalid("", "--spread %q: give a task type (%s) or %s", s, typeList(), SpreadAll)
	case !byType[TaskType(s)]:
		return invalid(TaskType(s), "--spread %s: the job has no %s tasks; give a type the job has, or %s", s, s, SpreadAll)
	}
	return nil
}
