package core

import (
	"fmt"

	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/taskspec"
)

// PolicyFor returns the Policy of a success rule; "" means the job's
// framework's (framework.SuccessOf: PyTorch's and JAX's is SuccessAll),
// else taskspec.DefaultSuccessRule. taskspec.SuccessChief is TensorFlowPolicy
// (chief:0, or worker:0 without a chief, decides; ps, evaluator and
// remaining workers are stopped once it succeeded), taskspec.SuccessAll is
// AllSucceed (every task must exit 0).
func PolicyFor(rule taskspec.SuccessRule, job taskspec.Job) (Policy, error) {
	if rule == "" {
		rule = framework.SuccessOf(job)
	}
	rule, err := taskspec.SuccessRuleOf(rule, job)
	if err != nil {
		return nil, fmt.Errorf("appmaster: %w", err)
	}
	if rule == taskspec.SuccessAll && job.MinWorkers > 0 {
		return ElasticPolicy{Min: job.MinWorkers}, nil
	}
	if rule == taskspec.SuccessAll {
		return AllSucceed{}, nil
	}
	return TensorFlowPolicy{StopTimeout: taskspec.TFStopTimeout}, nil
}
