package core

import (
	"fmt"
	"strings"

	"github.com/tfyarn/tfyarn/taskspec"
)

// startAfterNote adds to the diagnostics of tasks never allocated which
// types waited for them to start (--start-after): "; worker waited for
// ps:1 to start (--start-after worker=ps)". The rendezvous board enforces
// the order; this only says what the waiting tasks were waiting for.
func (m *Machine) startAfterNote(late []*TaskStatus, diagnostics string) string {
	if len(m.job.StartAfter) == 0 {
		return diagnostics
	}
	var notes []string
	for _, waiter := range taskspec.TaskTypes() {
		deps := m.job.StartAfter.Waits(waiter)
		if len(deps) == 0 {
			continue
		}
		var names, pairs []string
		for _, d := range deps {
			pairs = append(pairs, string(waiter)+"="+string(d))
			for _, t := range late {
				if t.Task.Type == d {
					names = append(names, t.Task.String())
				}
			}
		}
		if len(names) > 0 {
			notes = append(notes, fmt.Sprintf("%s waited for %s to start (--start-after %s)", waiter, strings.Join(names, ", "), strings.Join(pairs, ",")))
		}
	}
	if len(notes) == 0 {
		return diagnostics
	}
	return diagnostics + "; " + strings.Join(notes, "; ")
}
