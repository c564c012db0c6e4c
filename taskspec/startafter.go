package taskspec

import (
	"fmt"
	"sort"
	"strings"
)

// StartOrder says which task types start their programs only after others
// (`--start-after worker=ps`, TonY's depends-on, skein's depends): a task
// of a key type starts its program once every task of each listed type has
// started its own. The rendezvous holds the cluster spec back from it until
// then (rendezvous.Board).
type StartOrder map[TaskType][]TaskType

// maxStartAfterLen bounds the --start-after text: five types make at most
// twenty pairs.
const maxStartAfterLen = 512

// ParseStartAfter parses `TYPE=TYPE[,TYPE=TYPE]...` ("worker=ps,
// evaluator=chief"): the first type of each pair waits for the second.
// Repeated pairs count once. The types are checked against a job by
// Job.Validate.
func ParseStartAfter(s string) (StartOrder, error) {
	if len(s) > maxStartAfterLen {
		return nil, fmt.Errorf("--start-after is %d bytes long; give at most %d", len(s), maxStartAfterLen)
	}
	order := StartOrder{}
	for _, pair := range strings.Split(s, ",") {
		before, after, ok := strings.Cut(pair, "=")
		if !ok || strings.TrimSpace(before) == "" || strings.TrimSpace(after) == "" {
			return nil, fmt.Errorf("--start-after %q: expected TYPE=TYPE pairs, e.g. worker=ps (workers start after every ps)", pair)
		}
		waiter, err := ParseTaskType(before)
		if err != nil {
			return nil, fmt.Errorf("--start-after %q: %w", pair, err)
		}
		dep, err := ParseTaskType(after)
		if err != nil {
			return nil, fmt.Errorf("--start-after %q: %w", pair, err)
		}
		if !containsType(order[waiter], dep) {
			order[waiter] = append(order[waiter], dep)
		}
	}
	for _, deps := range order {
		sortTypes(deps)
	}
	return order, nil
}

// String renders the order the way --start-after takes it, in job order.
func (o StartOrder) String() string {
	var pairs []string
	for _, t := range TaskTypes() {
		for _, d := range o[t] {
			pairs = append(pairs, string(t)+"="+string(d))
		}
	}
	return strings.Join(pairs, ",")
}

// Waits returns the types a task of type t waits for, nil when none.
func (o StartOrder) Waits(t TaskType) []TaskType { return o[t] }

// validate refuses types the job does not have, a type waiting for itself
// and cycles (worker=ps,ps=worker), which would never start.
func (o StartOrder) validate(inJob map[TaskType]bool) error {
	for _, t := range TaskTypes() {
		for _, d := range o[t] {
			switch {
			case !t.Known() || !d.Known():
				return invalid("", "--start-after %s=%s: unknown task type; expected one of %s", t, d, typeList())
			case t == d:
				return invalid(t, "--start-after %s=%s: a type cannot wait for itself", t, d)
			case !inJob[t]:
				return invalid(t, "--start-after %s=%s: the job has no %s task; add --%s or drop the pair", t, d, t, t)
			case !inJob[d]:
				return invalid(d, "--start-after %s=%s: the job has no %s task to wait for; add --%s or drop the pair", t, d, d, d)
			}
		}
	}
	for _, t := range TaskTypes() {
		if cycle := o.cycleFrom(t); cycle != nil {
			return invalid(t, "--start-after: %s wait for one another, so none would start; drop one of these pairs", strings.Join(cycle, " → "))
		}
	}
	return nil
}

// cycleFrom returns a cycle of waits through start, as types in order
// ending where they began, or nil.
func (o StartOrder) cycleFrom(start TaskType) []string {
	var path []string
	seen := map[TaskType]bool{}
	var walk func(t TaskType) bool
	walk = func(t TaskType) bool {
		path = append(path, string(t))
		if t == start && len(path) > 1 {
			return true
		}
		if seen[t] {
			path = path[:len(path)-1]
			return false
		}
		seen[t] = true
		for _, d := range o[t] {
			if walk(d) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	if walk(start) {
		return path
	}
	return nil
}

func containsType(ts []TaskType, t TaskType) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

func sortTypes(ts []TaskType) {
	sort.Slice(ts, func(i, j int) bool { return jobOrder[ts[i]] < jobOrder[ts[j]] })
}
