package taskspec

import (
	"fmt"
	"strings"
)

// Affinity places one task type's tasks by where another's run, with the
// same YARN mechanism as Spread (spread.go): the tasks of Other carry the
// allocation tag "tfyarn-<other>", and the tasks of Type are asked for
// under a NODE-scope constraint on that tag: `in` (--colocate Type=Other:
// each on a node that runs a task of Other) or `notin` (--apart
// Type=Other: none on such a node). YARN's scheduler places a
// SchedulingRequest under one constraint, so a type has at most one:
// one --colocate or --apart pair, or --spread.
type Affinity struct {
	Type, Other TaskType
	Apart       bool
}

// Affinities are a job's --colocate and --apart pairs.
type Affinities []Affinity

// maxAffinityLen bounds the text of --colocate or --apart.
const maxAffinityLen = 512

// ParseAffinities parses `TYPE=TYPE[,TYPE=TYPE]...` for --colocate
// (apart false) or --apart; repeated pairs count once. The types are
// checked against a job by Job.Validate.
func ParseAffinities(s string, apart bool) (Affinities, error) {
	flag := affinityFlag(apart)
	if len(s) > maxAffinityLen {
		return nil, fmt.Errorf("%s is %d bytes long; give at most %d", flag, len(s), maxAffinityLen)
	}
	var out Affinities
	for _, pair := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(pair, "=")
		if !ok || strings.TrimSpace(a) == "" || strings.TrimSpace(b) == "" {
			return nil, fmt.Errorf("%s %q: expected TYPE=TYPE pairs, e.g. ps=worker", flag, pair)
		}
		t, err := ParseTaskType(a)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, pair, err)
		}
		o, err := ParseTaskType(b)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", flag, pair, err)
		}
		p := Affinity{Type: t, Other: o, Apart: apart}
		if !out.has(p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func (as Affinities) has(p Affinity) bool {
	for _, a := range as {
		if a == p {
			return true
		}
	}
	return false
}

func affinityFlag(apart bool) string {
	if apart {
		return "--apart"
	}
	return "--colocate"
}

// Flag is the pair as given: "--colocate ps=worker".
func (a Affinity) Flag() string {
	return fmt.Sprintf("%s %s=%s", affinityFlag(a.Apart), a.Type, a.Other)
}

// Text says the pair in words: "each ps task on a node running a worker
// task (--colocate ps=worker)".
func (a Affinity) Text() string {
	if a.Apart {
		return fmt.Sprintf("no %s task on a node running a %s task (%s)", a.Type, a.Other, a.Flag())
	}
	return fmt.Sprintf("each %s task on a node running a %s task (%s)", a.Type, a.Other, a.Flag())
}

// AffinityTag is the allocation tag of type t's containers that
// --colocate and --apart name: "tfyarn-worker".
func AffinityTag(t TaskType) string { return "tfyarn-" + string(t) }

// AffinityOf returns the pair constraining type t's placement, if any.
func (j Job) AffinityOf(t TaskType) (Affinity, bool) {
	for _, a := range j.Affinities {
		if a.Type == t {
			return a, true
		}
	}
	return Affinity{}, false
}

// AffinityTarget reports whether some pair names type t as the other:
// t's containers must carry AffinityTag(t).
func (j Job) AffinityTarget(t TaskType) bool {
	for _, a := range j.Affinities {
		if a.Other == t {
			return true
		}
	}
	return false
}

// AffinityText says every pair in words, "; "-separated; "" for none.
func (j Job) AffinityText() string {
	parts := make([]string, len(j.Affinities))
	for i, a := range j.Affinities {
		parts[i] = a.Text()
	}
	return strings.Join(parts, "; ")
}

// validate refuses unknown types, types the job lacks, a type placed by
// itself (that is --spread), a pair both colocated and apart, and a type
// under two constraints (YARN takes one per SchedulingRequest).
func (as Affinities) validate(j Job, inJob map[TaskType]bool) error {
	constrained := map[TaskType]Affinity{}
	for _, a := range as {
		switch {
		case !a.Type.Known() || !a.Other.Known():
			return invalid("", "%s: unknown task type; expected one of %s", a.Flag(), typeList())
		case a.Type == a.Other && a.Apart:
			return invalid(a.Type, "%s: to keep %s tasks on nodes of their own, use --spread %s", a.Flag(), a.Type, a.Type)
		case a.Type == a.Other:
			return invalid(a.Type, "%s: a type cannot be placed next to itself; drop the pair (--spread %s keeps them apart)", a.Flag(), a.Type)
		case !inJob[a.Type]:
			return invalid(a.Type, "%s: the job has no %s task; add --%s or drop the pair", a.Flag(), a.Type, a.Type)
		case !inJob[a.Other]:
			return invalid(a.Other, "%s: the job has no %s task; add --%s or drop the pair", a.Flag(), a.Other, a.Other)
		}
		if prev, ok := constrained[a.Type]; ok {
			if prev.Other == a.Other {
				return invalid(a.Type, "%s and %s contradict each other; keep one", prev.Flag(), a.Flag())
			}
			return invalid(a.Type, "%s and %s both place %s tasks; YARN places a request under one constraint, keep one", prev.Flag(), a.Flag(), a.Type)
		}
		if j.Spreads(a.Type) {
			return invalid(a.Type, "%s and --spread %s both place %s tasks; YARN places a request under one constraint, keep one", a.Flag(), j.Spread, a.Type)
		}
		constrained[a.Type] = a
	}
	return nil
}
