package appmaster

import (
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// TFStopTimeout is how long the AM waits, once the decider succeeded, for
// the tasks it stopped to end. The launchers get StopGrace to end their
// programs and the NodeManagers a hard stop after that, so this bound
// only matters when a node stops answering; it keeps the application's end
// within 30 s of the decider's.
const TFStopTimeout = 15 * time.Second

// PolicyFor returns the Policy of a success rule; "" means the job's
// taskspec.DefaultSuccessRule. taskspec.SuccessChief is TensorFlowPolicy
// (chief:0, or worker:0 without a chief, decides; ps, evaluator and
// remaining workers are stopped once it succeeded), taskspec.SuccessAll is
// AllSucceed (every task must exit 0).
func PolicyFor(rule taskspec.SuccessRule, job taskspec.Job) (Policy, error) {
	rule, err := taskspec.SuccessRuleOf(rule, job)
	if err != nil {
		return nil, fmt.Errorf("appmaster: %w", err)
	}
	if rule == taskspec.SuccessAll {
		return AllSucceed{}, nil
	}
	return TensorFlowPolicy{StopTimeout: TFStopTimeout}, nil
}
