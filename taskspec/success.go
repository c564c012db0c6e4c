package taskspec

import "fmt"

// SuccessRule is what decides a job's outcome (tfyarn run --success). The
// ApplicationMaster and the local runner both apply it.
type SuccessRule string

const (
	// SuccessChief is TensorFlow's rule: chief:0, or worker:0 without a
	// chief, decides; ps, evaluator and remaining workers are stopped once
	// it succeeded, and a failed chief, worker or ps fails the job.
	SuccessChief SuccessRule = "chief"
	// SuccessAll is the rule of generic commands: every task must exit 0,
	// and the job fails as soon as one fails.
	SuccessAll SuccessRule = "all"
)

// SuccessRules are the valid rules, in the order messages list them.
var SuccessRules = []SuccessRule{SuccessChief, SuccessAll}

// ParseSuccessRule reads a rule's name ("chief", "all"). The error is one
// line listing the valid names.
func ParseSuccessRule(s string) (SuccessRule, error) {
	for _, r := range SuccessRules {
		if s == string(r) {
			return r, nil
		}
	}
	return "", &ValidationError{Message: fmt.Sprintf("unknown success rule %q; expected %s or %s", s, SuccessChief, SuccessAll)}
}

// DefaultSuccessRule is the rule of a TensorFlow job that names none:
// TensorFlow's when the job is shaped like a TensorFlow job (a chief, ps or
// evaluator group, or a Python script to run), else every task must
// succeed, which is what `--worker 3x… -- COMMAND` users of generic
// commands expect. Each framework names its jobs' default rule (the
// registry's frameworks.SuccessOf, which the AM and run --local apply);
// this is TensorFlow's, kept here, being public Go API, and held equal to
// the framework's by a test in internal/framework/tensorflow.
func DefaultSuccessRule(job Job) SuccessRule {
	if job.Script != "" {
		return SuccessChief
	}
	for _, t := range []TaskType{Chief, PS, Evaluator} {
		if _, ok := job.Group(t); ok {
			return SuccessChief
		}
	}
	return SuccessAll
}

// SuccessRuleOf resolves a job's rule: rule itself when it is valid, the
// job's DefaultSuccessRule when rule is empty.
func SuccessRuleOf(rule SuccessRule, job Job) (SuccessRule, error) {
	if rule == "" {
		return DefaultSuccessRule(job), nil
	}
	return ParseSuccessRule(string(rule))
}
