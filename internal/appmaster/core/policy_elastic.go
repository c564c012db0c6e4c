package core

import (
	"fmt"
	"strings"
)

// ElasticPolicy is the rule of elastic PyTorch jobs (--min-workers): a
// worker that fails or is lost is no failure of the job while at least Min
// workers are running or have succeeded (torchrun's agents on the others
// meet again without it and go on); the job fails once fewer than Min are
// left, and succeeds when every worker has ended, at least Min of them
// with exit 0. The diagnostics name the workers it lost on the way.
type ElasticPolicy struct {
	Min int
}

// Verdict implements Policy.
func (p ElasticPolicy) Verdict(v View) Verdict {
	live, succeeded := 0, 0
	for _, t := range v.Tasks {
		switch {
		case t.State == TaskSucceeded:
			succeeded++
		case !t.State.Ended():
			live++
		}
	}
	lost := Failures(v.Tasks)
	if live+succeeded < p.Min {
		return Verdict{Outcome: JobFailed, Diagnostics: fmt.Sprintf("%d of %d workers left, fewer than --min-workers %d: %s", live+succeeded, len(v.Tasks), p.Min, lost)}
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
