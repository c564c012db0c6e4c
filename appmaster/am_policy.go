package appmaster

import (
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Success rules: what decides a job's outcome (tfyarn run --success).
const (
	// SuccessChief is TensorFlow's rule (TensorFlowPolicy): chief:0, or
	// worker:0 without a chief, decides; ps, evaluator and remaining
	// workers are stopped once it succeeded.
	SuccessChief = "chief"
	// SuccessAll is the rule of generic commands (AllSucceed): every task
	// must exit 0.
	SuccessAll = "all"
)

// TFStopTimeout is how long the AM waits, once the decider succeeded, for
// the tasks it stopped to end. The launchers get StopGrace to end their
// programs and the NodeManagers a hard stop after that, so this bound
// only matters when a node stops answering; it keeps the application's end
// within 30 s of the decider's.
const TFStopTimeout = 20 * time.Second

// DefaultSuccess is the rule a job gets when none is given: TensorFlow's
// when the job is shaped like a TensorFlow job (a chief, ps or evaluator
// group, or a Python script to run), else every task must succeed, which
// is what `--worker 3x… -- COMMAND` users of generic commands expect.
func DefaultSuccess(job taskspec.Job) string {
	if job.Script != "" {
		return SuccessChief
	}
	for _, t := range []taskspec.TaskType{taskspec.Chief, taskspec.PS, taskspec.Evaluator} {
		if _, ok := job.Group(t); ok {
			return SuccessChief
		}
	}
	return SuccessAll
}

// PolicyFor returns the Policy of a success rule; "" means DefaultSuccess.
func PolicyFor(rule string, job taskspec.Job) (Policy, error) {
	if rule == "" {
		rule = DefaultSuccess(job)
	}
	switch rule {
	case SuccessChief:
		return TensorFlowPolicy{StopTimeout: TFStopTimeout}, nil
	case SuccessAll:
		return AllSucceed{}, nil
	}
	return nil, fmt.Errorf("appmaster: unknown success rule %q; expected %s or %s", rule, SuccessChief, SuccessAll)
}
