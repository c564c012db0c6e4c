// Package framework is the seam between tfyarn and the training frameworks
// it launches: for each framework (TensorFlow, PyTorch, JAX), the task
// types its jobs may have, the rule that decides its jobs, and what each
// task's launcher runs: the program's arguments and environment, built by
// one pure function from the task's identity and the cluster of reported
// addresses, and what becomes of the task's reserved port.
//
// The launcher (executor), the client's checks and --local ask this
// package; none of them knows a framework's variables. Adding one is a
// file here and its table of expected environments.
package framework

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Names of the frameworks (tfyarn run --framework).
const (
	TensorFlow = "tensorflow"
	PyTorch    = "pytorch"
	JAX        = "jax"
)

// Framework is one training framework.
type Framework interface {
	// Name is what --framework takes.
	Name() string
	// TaskTypes are the task types its jobs may have.
	TaskTypes() []taskspec.TaskType
	// Success is the rule deciding its jobs when the user names none; ""
	// leaves it to the job's shape (taskspec.DefaultSuccessRule).
	Success() taskspec.SuccessRule
	// Launch is what the launcher of one task runs. It is a pure function
	// of t: the same task, the same launch.
	Launch(t Task) (Launch, error)
	// Reserved are the variables its launches set in every task whatever
	// the job's environment says: a job may not name them.
	Reserved() []string
	// Abilities are what its jobs may ask beyond one process per task.
	Abilities() Abilities
}

// Abilities are a framework's answers to the job options that not every
// framework takes; each non-empty one says, for messages, how it does it.
type Abilities struct {
	// ScriptOnly: it runs a script, never a command ("runs a script under
	// torchrun").
	ScriptOnly string
	// ProcsPerNode: several processes per container, --nproc-per-node
	// ("torchrun's processes per container").
	ProcsPerNode string
	// Elastic: a job that goes on with fewer workers, --min-workers
	// ("elastic torchrun").
	Elastic string
}

// Task is what a launcher knows of its task once every task has reported
// its address.
type Task struct {
	ID taskspec.TaskID
	// Cluster holds the addresses of the job's chief, worker and ps tasks.
	Cluster taskspec.ClusterSpec
	// Port is the port the launcher reserved for the task: its address's.
	Port int
	// Argv is the user's program: for a script job, the interpreter, the
	// script and its arguments.
	Argv []string
	// Env is the program's environment so far (read only): a framework may
	// read what the user set, e.g. to respect a switch it turned off.
	Env []string
	// ProcsPerNode is --nproc-per-node: processes per container (0: one).
	ProcsPerNode int
	// RunID names the job's current run, equal in every task of it and new
	// at each restart of the cluster.
	RunID string
	// MinNodes, above 0, is an elastic job's --min-workers, and Store the
	// address of the rendezvous store the ApplicationMaster serves for it.
	MinNodes int
	Store    string
}

// Launch is a task's program as its launcher starts it.
type Launch struct {
	Argv []string
	// Set replaces variables of the environment; Fill sets only those the
	// user left unset.
	Set, Fill map[string]string
	// HoldPort keeps the task's reserved port taken (a bound socket with
	// SO_REUSEPORT) until the program listens on it, for programs whose
	// server binds with SO_REUSEPORT: no window where another process
	// could take the port. Otherwise the port is freed just before the
	// program starts.
	HoldPort bool
	// ServeStore makes the launcher itself listen on the reserved port and
	// serve a key-value store in torch's TCPStore protocol there (the
	// rendezvous of torchrun's c10d backend): the port never leaves the
	// launcher.
	ServeStore bool
	// PythonHook, when set, is Python source the program's interpreter
	// runs at start: the launcher writes it as sitecustomize.py into a
	// directory of its own, first on PYTHONPATH.
	PythonHook string
	// Describe is what the launcher logs about the launch (one line).
	Describe string
}

var all = map[string]Framework{
	TensorFlow: tensorFlow{},
	PyTorch:    pyTorch{},
	JAX:        jax{},
}

// Default is the framework of jobs that name none.
const Default = TensorFlow

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
func Lookup(name string) (Framework, error) {
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
// framework does not have, processes per node where it takes none.
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
		names, how := able(func(a Abilities) string { return a.ProcsPerNode })
		return &taskspec.ValidationError{Message: fmt.Sprintf("--nproc-per-node is for --framework %s (%s); %s runs one process per task", names, how, f.Name())}
	}
	if job.MinWorkers != 0 {
		workers := 0
		if g, ok := job.Group(taskspec.Worker); ok {
			workers = g.Instances
		}
		switch {
		case can.Elastic == "":
			names, how := able(func(a Abilities) string { return a.Elastic })
			return &taskspec.ValidationError{Message: fmt.Sprintf("--min-workers is for --framework %s (%s); %s jobs need all their workers", names, how, f.Name())}
		case job.MinWorkers < 1 || job.MinWorkers > workers:
			return &taskspec.ValidationError{Message: fmt.Sprintf("--min-workers %d: give from 1 to the job's %d workers", job.MinWorkers, workers)}
		case job.Restarts.Max > 0 || len(job.Restarts.RetryExitCodes) > 0:
			return &taskspec.ValidationError{Message: "--min-workers goes on without a lost worker instead of restarting the job: drop --max-restarts and --retry-exit-codes"}
		}
	}
	if job.ProcsPerNode > maxProcsPerNode {
		return &taskspec.ValidationError{Message: fmt.Sprintf("--nproc-per-node %d is more than %d; give fewer processes per container", job.ProcsPerNode, maxProcsPerNode)}
	}
	return nil
}

// able names the frameworks with an ability (those for which of gives a
// description) and their descriptions, each joined by " or ".
func able(of func(Abilities) string) (names, how string) {
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

// SetsForTasks reports whether a framework sets the variable name in its
// tasks itself (Framework.Reserved), so that a job may not set it.
func SetsForTasks(name string) bool {
	for _, f := range all {
		for _, r := range f.Reserved() {
			if r == name {
				return true
			}
		}
	}
	return false
}

// SuccessOf is the rule of a job whose user named none: its framework's,
// else what the job's shape says (taskspec.DefaultSuccessRule).
func SuccessOf(job taskspec.Job) taskspec.SuccessRule {
	if f, err := Lookup(job.Framework); err == nil && f.Success() != "" {
		return f.Success()
	}
	return taskspec.DefaultSuccessRule(job)
}

// lookupEnv reads name from env ("NAME=value" entries, the last wins).
func lookupEnv(env []string, name string) (string, bool) {
	prefix := name + "="
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], prefix); ok {
			return v, true
		}
	}
	return "", false
}

// workers returns the workers' addresses, by index, for frameworks whose
// tasks are all workers, checking that t is one of them.
func workers(t Task) ([]string, error) {
	ws := t.Cluster[taskspec.Worker]
	if t.ID.Type != taskspec.Worker {
		return nil, fmt.Errorf("%s is not a worker task", t.ID)
	}
	if t.ID.Index < 0 || t.ID.Index >= len(ws) {
		return nil, fmt.Errorf("%s is not in the cluster (%d workers)", t.ID, len(ws))
	}
	return ws, nil
}
