package core

import (
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/taskspec"
)

// PolicyFor returns the Policy of a success rule; "" means the job's
// framework's (frameworks.SuccessOf: PyTorch's and JAX's is SuccessAll),
// else taskspec.DefaultSuccessRule. taskspec.SuccessChief is ChiefPolicy
// (chief:0, or worker:0 without a chief, decides; ps, evaluator and
// remaining workers are stopped once it succeeded), taskspec.SuccessAll is
// AllSucceed (every task must exit 0).
func PolicyFor(rule taskspec.SuccessRule, job taskspec.Job) (Policy, error) {
	if rule == "" {
		rule = frameworks.SuccessOf(job)
	}
	rule, err := taskspec.SuccessRuleOf(rule, job)
	if err != nil {
		return nil, fmt.Errorf("appmaster: %w", err)
	}
	if rule == taskspec.SuccessAll && job.MinWorkers > 0 {
		return ElasticPolicy{Min: job.MinWorkers, MaxReplacements: frameworks.ElasticReplacementsOf(job)}, nil
	}
	if rule == taskspec.SuccessAll {
		return AllSucceed{}, nil
	}
	return ChiefPolicy{StopTimeout: taskspec.TFStopTimeout}, nil
}

// WithWorkerGrace returns p with grace as the time its lingering workers
// have to end by themselves after the decider succeeded, for a policy that
// lets workers linger (ChiefPolicy); any other policy comes back as it is.
// run --local shortens the grace (localrun.Options.WorkerGrace).
func WithWorkerGrace(p Policy, grace time.Duration) Policy {
	if c, ok := p.(ChiefPolicy); ok {
		c.WorkerGrace = grace
		return c
	}
	return p
}
