// Package frameworks is the registry of the training frameworks tfyarn
// launches (each a package under internal/framework/, behind the interface
// of package framework): which there are, the one a job names, and the
// checks and defaults that follow from it, the Policy of a success rule,
// the job's side service and whether its workers are replaced in place.
// The launcher, the AM, the client and --local ask here; the AM's core
// consults the Policy and the answers its driver got here, and imports no
// framework nor this registry.
package frameworks

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/framework/jax"
	"github.com/tfyarn/tfyarn/internal/framework/lightgbm"
	"github.com/tfyarn/tfyarn/internal/framework/pytorch"
	"github.com/tfyarn/tfyarn/internal/framework/tensorflow"
	"github.com/tfyarn/tfyarn/internal/framework/xgboost"
	"github.com/tfyarn/tfyarn/internal/success"
	"github.com/tfyarn/tfyarn/taskspec"
)

// all are the frameworks tfyarn has, by name.
var all = map[string]framework.Framework{
	tensorflow.Name: tensorflow.New(),
	pytorch.Name:    pytorch.New(),
	jax.Name:        jax.New(),
	xgboost.Name:    xgboost.New(),
	lightgbm.Name:   lightgbm.New(),
}

// Default is the framework of jobs that name none.
const Default = tensorflow.Name

// Names lists the frameworks, sorted.
func Names() []string {
	out := make([]string, 0, len(all))
	for n := range all {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the framework called name; "" is Default. The error is one
// line listing the valid names.
func Lookup(name string) (framework.Framework, error) {
	if name == "" {
		name = Default
	}
	f, ok := all[name]
	if !ok {
		return nil, fmt.Errorf("unknown framework %q; expected one of %s", name, strings.Join(Names(), ", "))
	}
	return f, nil
}

// CheckJob reports why job cannot run under its framework: a task type the
// framework does not have, processes per node where it takes none, a
// variable of the job's environment the framework sets itself (CheckEnv).
func CheckJob(job taskspec.Job) error {
	f, err := Lookup(job.Framework)
	if err != nil {
		return &taskspec.ValidationError{Message: "--framework: " + err.Error()}
	}
	allowed := map[taskspec.TaskType]bool{}
	for _, t := range f.TaskTypes() {
		allowed[t] = true
	}
	for _, g := range job.Tasks {
		if !allowed[g.Type] {
			return &taskspec.ValidationError{TaskType: g.Type, Message: fmt.Sprintf("--framework %s has no %s tasks; give its tasks as --%s", f.Name(), g.Type, f.TaskTypes()[0])}
		}
	}
	can := f.Abilities()
	if can.ScriptOnly != "" && job.Script == "" {
		return &taskspec.ValidationError{Message: fmt.Sprintf("--framework %s %s; give SCRIPT.py instead of a command", f.Name(), can.ScriptOnly)}
	}
	if job.ProcsPerNode < 0 {
		return &taskspec.ValidationError{Message: fmt.Sprintf("--nproc-per-node %d is negative; give 1 or more", job.ProcsPerNode)}
	}
	if job.ProcsPerNode > 0 && can.ProcsPerNode == "" {
		names, how := able(func(a framework.Abilities) string { return a.ProcsPerNode })
		return &taskspec.ValidationError{Message: fmt.Sprintf("--nproc-per-node is for --framework %s (%s); %s runs one process per task", names, how, f.Name())}
	}
	if job.MinWorkers != 0 {
		workers := 0
		if g, ok := job.Group(taskspec.Worker); ok {
			workers = g.Instances
		}
		switch {
		case can.Elastic == "":
			names, how := able(func(a framework.Abilities) string { return a.Elastic })
			return &taskspec.ValidationError{Message: fmt.Sprintf("--min-workers is for --framework %s (%s); %s jobs need all their workers", names, how, f.Name())}
		case job.MinWorkers < 1 || job.MinWorkers > workers:
			return &taskspec.ValidationError{Message: fmt.Sprintf("--min-workers %d: give from 1 to the job's %d workers", job.MinWorkers, workers)}
		case job.Restarts.Max > 0 || len(job.Restarts.RetryExitCodes) > 0:
			return &taskspec.ValidationError{Message: "--min-workers goes on without a lost worker instead of restarting the job: drop --max-restarts and --retry-exit-codes"}
		}
	}
	if job.ElasticLastCall != 0 {
		switch {
		case job.MinWorkers == 0:
			return &taskspec.ValidationError{Message: "--elastic-last-call is for an elastic job: add --min-workers N"}
		case job.ElasticLastCall < time.Second || job.ElasticLastCall > MaxElasticLastCall || job.ElasticLastCall%time.Second != 0:
			return &taskspec.ValidationError{Message: fmt.Sprintf("--elastic-last-call %s: give whole seconds from 1s to %s", job.ElasticLastCall, MaxElasticLastCall)}
		}
	}
	if job.ProcsPerNode > maxProcsPerNode {
		return &taskspec.ValidationError{Message: fmt.Sprintf("--nproc-per-node %d is more than %d; give fewer processes per container", job.ProcsPerNode, maxProcsPerNode)}
	}
	return CheckEnv(job, job.Env, "")
}

// MaxElasticLastCall bounds --elastic-last-call: longer, a lost worker's
// survivors would sit idle that long before going on.
const MaxElasticLastCall = 10 * time.Minute

// able names the frameworks with an ability (those for which of gives a
// description) and their descriptions, each joined by " or ".
func able(of func(framework.Abilities) string) (names, how string) {
	var ns, hs []string
	for _, n := range Names() {
		if h := of(all[n].Abilities()); h != "" {
			ns, hs = append(ns, n), append(hs, h)
		}
	}
	return strings.Join(ns, " or "), strings.Join(hs, " or ")
}

// maxProcsPerNode bounds --nproc-per-node: a container's processes.
const maxProcsPerNode = 1024

// SetsForTasks reports whether job's framework sets the variable name in
// its tasks itself (Framework.Reserved), so that the job may not set it,
// and how, for messages. Only the job's own framework counts: a variable
// another framework sets (TF_CONFIG in a PyTorch job) reaches the
// program with the job's value, since no launch sets it there.
func SetsForTasks(job taskspec.Job, name string) (how string, ok bool) {
	f, err := Lookup(job.Framework)
	if err != nil {
		return "", false
	}
	how, ok = f.Reserved(job)[name]
	return how, ok
}

// CheckEnv refuses a variable of env (the job's environment, or its
// secret one: flag names it in the message) that job's framework sets in
// its tasks itself: the job's value would be lost without a word.
func CheckEnv(job taskspec.Job, env map[string]string, flag string) error {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if how, ok := SetsForTasks(job, k); ok {
			f, _ := Lookup(job.Framework)
			todo := "drop it from the environment"
			if flag != "" {
				todo = "pick another name"
				k = flag + " " + k
			}
			return &taskspec.ValidationError{Message: fmt.Sprintf("%s is set by --framework %s in each task (%s); %s", k, f.Name(), how, todo)}
		}
	}
	return nil
}

// ElasticReplacementsOf is how many lost workers the job's framework lets an elastic job
// replace (framework.Abilities.ElasticReplacements); 0 for a framework without elastic jobs.
func ElasticReplacementsOf(job taskspec.Job) int {
	if f, err := Lookup(job.Framework); err == nil {
		return f.Abilities().ElasticReplacements
	}
	return 0
}

// JobServiceOf is the side service the job's framework needs for the whole
// job (framework.Framework.JobService), with key its secret, nil for none.
func JobServiceOf(job taskspec.Job, key []byte) framework.SideService {
	if f, err := Lookup(job.Framework); err == nil {
		return f.JobService(job, key)
	}
	return nil
}

// WorkersReplacedInPlace reports whether a failed worker of job is replaced
// alone at its address rather than with the cluster: its framework's say
// (framework.Framework.WorkersReplacedInPlace).
func WorkersReplacedInPlace(job taskspec.Job) bool {
	f, err := Lookup(job.Framework)
	return err == nil && f.WorkersReplacedInPlace(job)
}

// NameOf is the name of the job's framework (Default when it names none).
func NameOf(job taskspec.Job) string {
	if job.Framework == "" {
		return Default
	}
	return job.Framework
}

// SuccessOf is the rule of a job whose user named none: its framework's
// (framework.Framework.Success). A job naming no known framework (which
// CheckJob refuses) gets the one of its shape, taskspec.DefaultSuccessRule.
func SuccessOf(job taskspec.Job) taskspec.SuccessRule {
	if f, err := Lookup(job.Framework); err == nil {
		return f.Success(job)
	}
	return taskspec.DefaultSuccessRule(job)
}

// PolicyFor returns the Policy of a success rule (--success), which the
// AM's core and run --local consult: "" means the job's (SuccessOf).
// taskspec.SuccessAll is the rule of no framework: success.AllSucceed
// (every task must exit 0), or for an elastic job (--min-workers)
// success.Elastic with its framework's bound on replacements; any other
// rule is the framework's that defines it (framework.Framework.Rules:
// taskspec.SuccessChief is TensorFlow's), whatever the job's framework.
func PolicyFor(rule taskspec.SuccessRule, job taskspec.Job) (success.Policy, error) {
	if rule == "" {
		rule = SuccessOf(job)
	}
	rule, err := taskspec.SuccessRuleOf(rule, job)
	if err != nil {
		return nil, err
	}
	if rule == taskspec.SuccessAll {
		if job.MinWorkers > 0 {
			return success.Elastic{Min: job.MinWorkers, MaxReplacements: ElasticReplacementsOf(job)}, nil
		}
		return success.AllSucceed{}, nil
	}
	for _, n := range Names() {
		for _, r := range all[n].Rules() {
			if r.Name == rule {
				return r.Policy(job), nil
			}
		}
	}
	return nil, fmt.Errorf("success rule %q: no framework defines it", rule)
}
