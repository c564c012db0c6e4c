package core

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// checkedStep is how every test of this package steps a machine: Step, then
// checkIndexes on the state it leaves. The machine's indexes must say what a
// pass over every task says, and shortVerdict what the policy says, so the
// shortcuts they allow change no behaviour. Both are pure functions of the
// machine's state, so the tests check them from outside and the machine
// carries no test hook (TestEveryStepIsChecked holds the tests to it).
func checkedStep(m *Machine, ev Event) {
	m.Step(ev)
	checkIndexes(m)
}

func checkIndexes(m *Machine) {
	if err := indexError(m); err != nil {
		panic(fmt.Sprintf("core: index out of step: %v", err))
	}
}

func indexError(m *Machine) error {
	counts := map[taskspec.TaskType][numTaskStates]int{}
	live := map[taskspec.TaskType]int{}
	unallocated := 0
	for _, t := range m.tasks {
		c := counts[t.Task.Type]
		c[t.State]++
		counts[t.Task.Type] = c
		live[t.Task.Type] += unstopped(t)
		if t.unallocated {
			unallocated++
		}
		if t.StopRequested && t.State.Live() && !t.HardStopped && !slices.Contains(m.softStopped, timedTask{t, t.StopRequestedAt}) {
			return fmt.Errorf("%s is stopping gracefully but not in softStopped", t.Task)
		}
		if t.signalled != nil && t.State.Live() && !slices.Contains(m.signalled, timedTask{t, t.signalledAt}) {
			return fmt.Errorf("%s is signalled but not in signalled", t.Task)
		}
	}
	for name, q := range map[string]timedQueue{"softStopped": m.softStopped, "signalled": m.signalled} {
		if !slices.IsSortedFunc(q, func(a, b timedTask) int { return a.at.Compare(b.at) }) {
			return fmt.Errorf("%s is out of time order", name)
		}
	}
	var totals [numTaskStates]int
	for _, c := range counts {
		for s, n := range c {
			totals[s] += n
		}
	}
	if totals != m.stateCounts {
		return fmt.Errorf("stateCounts %v, the tasks say %v", m.stateCounts, totals)
	}
	for typ, ti := range m.types {
		if ti.counts != counts[typ] {
			return fmt.Errorf("%s counts %v, the tasks say %v", typ, ti.counts, counts[typ])
		}
		if ti.unstopped != live[typ] {
			return fmt.Errorf("%s unstopped %d, the tasks say %d", typ, ti.unstopped, live[typ])
		}
	}
	if unallocated != m.unallocatedFailed {
		return fmt.Errorf("unallocatedFailed %d, the tasks say %d", m.unallocatedFailed, unallocated)
	}
	for _, g := range m.groups {
		var first *TaskStatus
		wanted := 0
		for _, t := range m.tasks {
			if m.wants(g, t) {
				if first == nil {
					first = t
				}
				if m.restarting == nil {
					wanted++
				}
			}
		}
		if got := m.firstPending(g); got != first {
			return fmt.Errorf("firstPending of the %s ask is %v, the tasks say %v", g.spec.Type, got, first)
		}
		if got := m.ask(g).Count; got != wanted {
			return fmt.Errorf("the %s ask (id %d) counts %d, the tasks say %d", g.spec.Type, g.allocationRequestID, got, wanted)
		}
	}
	if m.allocTimeout > 0 && !m.now.IsZero() && !m.allocScan {
		for _, t := range m.tasks {
			if t.State == TaskPending && !t.overdue && !t.RequestedAt.IsZero() && m.now.Sub(t.RequestedAt) >= m.allocTimeout &&
				(m.allocNext.IsZero() || m.now.Before(m.allocNext)) && m.restarting == nil && m.phase == PhaseRunning {
				return fmt.Errorf("%s is past its allocation deadline, which allocDeadline would skip", t.Task)
			}
		}
	}
	// In every phase: the Step that finishes a job consulted the policy on
	// the state it leaves, so a finished machine's verdicts are checked too.
	if short, ok := m.shortVerdict(); ok && m.restarting == nil {
		if v := m.policy.Verdict(m.view()); !reflect.DeepEqual(m.effect(v), m.effect(short)) {
			return fmt.Errorf("shortVerdict says %+v, the policy %+v", short, v)
		}
	}
	return nil
}

// effect is what consultPolicy does with v: the job's end, or the stops
// and restarts that apply, in order.
func (m *Machine) effect(v Verdict) Verdict {
	if v.Outcome != Undecided {
		return Verdict{Outcome: v.Outcome, Diagnostics: v.Diagnostics}
	}
	var out Verdict
	for _, id := range v.Stop {
		if t := m.byTask[id]; t != nil && t.State.Live() && !t.StopRequested {
			out.Stop = append(out.Stop, id)
		}
	}
	for _, id := range v.Restart {
		if t := m.byTask[id]; t != nil && t.State.Ended() {
			out.Restart = append(out.Restart, id)
		}
	}
	return out
}

// The checks can fail: an index put out of step is caught.
func TestCheckIndexesCatchesDrift(t *testing.T) {
	job := taskspec.Job{Command: "true", Tasks: []taskspec.TaskGroup{{Type: taskspec.Worker, Instances: 3}}}
	for name, drift := range map[string]func(m *Machine){
		"count":  func(m *Machine) { m.types[taskspec.Worker].counts[TaskRunning]++ },
		"cursor": func(m *Machine) { m.types[taskspec.Worker].cursor = 3 },
		"alloc":  func(m *Machine) { m.allocScan, m.allocNext = false, m.now.Add(time.Hour) },
		"state": func(m *Machine) {
			m.tasks[0].State, m.tasks[1].State, m.tasks[2].State = TaskSucceeded, TaskSucceeded, TaskSucceeded
		},
	} {
		m, err := New(Config{Job: job, AllocTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Unix(1000, 0)
		checkedStep(m, Tick{Now: now})
		checkedStep(m, Registered{})
		if err := indexError(m); err != nil {
			t.Fatalf("%s: before the drift: %v", name, err)
		}
		m.now = now.Add(2 * time.Minute)
		if name != "alloc" {
			m.now = now
		}
		drift(m)
		if err := indexError(m); err == nil {
			t.Errorf("%s: drift not caught", name)
		}
	}
}

// TestEveryStepIsChecked: the tests of this package step machines only
// through checkedStep, so that every Step they take is checked.
func TestEveryStepIsChecked(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Name.Name == "checkedStep" {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Step" {
						t.Errorf("%s: %s steps a machine unchecked: call checkedStep", fset.Position(call.Pos()), fn.Name.Name)
					}
				}
				return true
			})
		}
	}
}
