package success

import (
	"fmt"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Elastic is the rule of elastic jobs (--min-workers, for the frameworks
// with the ability framework.Abilities.Elastic).
//
//   - A worker that fails or is lost, whatever ended it, is no failure of
//     the job while at least Min workers remain (running, or succeeded):
//     the framework's agents on the others meet again without it (on the
//     framework's job service, which the ApplicationMaster serves) and go
//     on.
//   - The lost worker is replaced (Verdict.Replace: a new container, the
//     same task, the next attempt), no cluster restart: it joins the same
//     rendezvous, the others meet again with it, and the job grows back.
//     A replacement that has no
//     container yet does not count among the workers that remain.
//   - Nothing is replaced once a worker has succeeded (the others are
//     finishing: a newcomer would find no round to join), nor a worker
//     that never got a container (its failure is the cluster's answer),
//     nor one whose program said a restart cannot help (NoRestart), nor
//     past MaxReplacements.
//   - A worker still waiting for a container past --alloc-timeout
//     (Overdue: the job held Min at its deadline, the core's elastic_alloc.go) does
//     not count among the workers that remain either.
//   - The job fails once fewer than Min remain, and succeeds when every
//     worker has ended (or waits, unreplaced or overdue, for a
//     container), at least Min of them with exit 0.
//
// The diagnostics name the workers it lost on the way; the machine adds
// the ones it replaced (the core).
type Elastic struct {
	Min int
	// MaxReplacements bounds how many lost workers the job replaces: the
	// framework's (framework.Abilities.ElasticReplacements), past which the
	// survivors could not meet again anyway.
	MaxReplacements int
}

// Verdict implements Policy.
func (p Elastic) Verdict(v View) Verdict {
	live, succeeded, replacements := 0, 0, v.Replaced
	var replaceable []taskspec.TaskID
	var overdue []string
	for _, t := range v.Tasks {
		switch {
		case t.State == TaskSucceeded:
			succeeded++
		case t.State == TaskFailed && !t.Unallocated && !t.NoRestart:
			replaceable = append(replaceable, t.Task)
		case t.State == TaskPending && t.Overdue:
			// Past --alloc-timeout, still asked for:
			// not a worker that remains.
			overdue = append(overdue, fmt.Sprintf("%s waiting for a container for %s", t.Task, v.Now.Sub(t.RequestedAt).Round(time.Second)))
		case t.State == TaskPending && t.Attempt > 0:
			// A replacement without a container yet: not a worker that remains.
		case !t.State.Ended():
			live++
		}
	}
	lost := Failures(v.Tasks)
	if live+succeeded < p.Min {
		d := fmt.Sprintf("%d of %d workers left, fewer than --min-workers %d: %s", live+succeeded, len(v.Tasks), p.Min, lost)
		if len(overdue) > 0 {
			d = strings.TrimSuffix(d+"; "+strings.Join(overdue, ", "), ": ; ")
		}
		return Verdict{Outcome: JobFailed, Diagnostics: d}
	}
	if live > 0 && succeeded == 0 && len(replaceable) > 0 {
		if n := p.MaxReplacements - replacements; len(replaceable) > n {
			replaceable = replaceable[:max(n, 0)]
		}
		if len(replaceable) > 0 {
			return Verdict{Replace: replaceable}
		}
	}
	if live > 0 {
		return Verdict{}
	}
	d := []string{fmt.Sprintf("%d of %d workers succeeded", succeeded, len(v.Tasks))}
	if lost != "" {
		d = append(d, "lost on the way: "+lost)
	}
	return Verdict{Outcome: JobSucceeded, Diagnostics: strings.Join(d, "; ")}
}
