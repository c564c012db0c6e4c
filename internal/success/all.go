package success

import "fmt"

// AllSucceed is the rule taskspec.SuccessAll, of generic commands and of
// frameworks whose jobs need every task: the job succeeds when every task exits 0 and fails
// as soon as one task fails, naming it.
type AllSucceed struct{}

// Verdict implements Policy.
func (AllSucceed) Verdict(v View) Verdict {
	if failed := Failures(v.Tasks); len(failed) > 0 {
		return Verdict{Outcome: JobFailed, Diagnostics: failed}
	}
	for _, t := range v.Tasks {
		if !t.State.Ended() {
			return Verdict{}
		}
	}
	return allSucceeded(len(v.Tasks))
}

// FastVerdict implements FastPolicy: AllSucceed's Verdict while no task
// has failed.
func (AllSucceed) FastVerdict(c Tally) (Verdict, bool) {
	if c.InState(TaskFailed) > 0 {
		return Verdict{}, false
	}
	if c.InState(TaskSucceeded)+c.InState(TaskStopped) < c.Total() {
		return Verdict{}, true
	}
	return allSucceeded(c.Total()), true
}

func allSucceeded(tasks int) Verdict {
	return Verdict{Outcome: JobSucceeded, Diagnostics: fmt.Sprintf("all %d tasks succeeded", tasks)}
}
