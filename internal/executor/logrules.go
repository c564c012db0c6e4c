package executor

import (
	"fmt"
	"regexp"
	"sync"

	"github.com/tfyarn/tfyarn/internal/rendezvous"
)

// logRules match the program's stderr lines against the job's
// --fail-on-log and --exclude-node-on-log (RE2: linear in the line, which
// the tail buffer caps at rendezvous.MaxStderrLineLen). The first line that
// matches is kept; supervise then ends the program and the exit report
// names the rule and the line. The ApplicationMaster decides what follows
// (appmaster/core's logrules.go). A nil *logRules matches nothing.
type logRules struct {
	fail, exclude *regexp.Regexp

	mu         sync.Mutex
	rule, line string
	hit        chan struct{} // closed at the first match
}

// newLogRules compiles the expressions; nil when both are empty.
func newLogRules(fail, exclude string) (*logRules, error) {
	if fail == "" && exclude == "" {
		return nil, nil
	}
	r := &logRules{hit: make(chan struct{})}
	var err error
	if fail != "" {
		if r.fail, err = regexp.Compile(fail); err != nil {
			return nil, fmt.Errorf("task launcher: --fail-on-log: %w", err)
		}
	}
	if exclude != "" {
		if r.exclude, err = regexp.Compile(exclude); err != nil {
			return nil, fmt.Errorf("task launcher: --exclude-node-on-log: %w", err)
		}
	}
	return r, nil
}

// check matches one stderr line; only the first match counts. A line
// matching both rules is --fail-on-log's: the job ends either way.
func (r *logRules) check(line string) {
	if r == nil {
		return
	}
	rule := ""
	switch {
	case r.fail != nil && r.fail.MatchString(line):
		rule = rendezvous.LogRuleFail
	case r.exclude != nil && r.exclude.MatchString(line):
		rule = rendezvous.LogRuleExcludeNode
	default:
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rule == "" {
		r.rule, r.line = rule, line
		close(r.hit)
	}
}

// matched is closed at the first match; nil (never) without rules.
func (r *logRules) matched() <-chan struct{} {
	if r == nil {
		return nil
	}
	return r.hit
}

// match is the rule that matched and its line; empty before any.
func (r *logRules) match() (rule, line string) {
	if r == nil {
		return "", ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rule, r.line
}
