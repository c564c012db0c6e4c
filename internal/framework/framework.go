// Package framework is the seam between tfyarn and the training frameworks
// it launches: the interface each framework implements (one package each,
// under internal/framework/: tensorflow, pytorch, jax) and what it is
// given and gives back. For each framework: the task types its jobs may
// have, the success rule that decides its jobs and the rules it defines
// (policies of package success), the variables it reserves, the job
// options it takes, whether a lost worker is replaced in place, what each
// task's launcher runs (the program's arguments and environment, built by
// one pure function from the task's identity and the cluster of reported
// addresses, and what becomes of the task's reserved port, a side service
// included), and a side service for the whole job.
//
// The launcher (executor), the AM, run --local and the client's checks ask
// the registry (internal/frameworks), and the AM's core consults the
// Policy its driver got there; none of them knows a framework's variables,
// rules or the protocol of its side services. Adding one is a package here,
// its tests, and a line in the registry (docs/frameworks.md, "Adding a
// framework").
package framework

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/reqsign"
	"github.com/tfyarn/tfyarn/internal/success"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Framework is one training framework.
type Framework interface {
	// Name is what --framework takes.
	Name() string
	// TaskTypes are the task types its jobs may have.
	TaskTypes() []taskspec.TaskType
	// Success is the rule deciding job when its user names none (--success):
	// a rule of Rules, or taskspec.SuccessAll.
	Success(job taskspec.Job) taskspec.SuccessRule
	// Rules are the success rules it defines (TensorFlow's "chief"), which
	// --success may name for a job of any framework. The rules of no
	// framework (every task succeeds, an elastic job's minimum of
	// workers: package success) are the registry's.
	Rules() []Rule
	// Launch is what the launcher of one task runs. It is a pure function
	// of t: the same task, the same launch.
	Launch(t Task) (Launch, error)
	// Reserved are the variables that reach job's program with the
	// framework's value whatever the job's environment says, each with how
	// the framework sets it (for messages): a job may not name them, since
	// its value would be lost without a word.
	Reserved(job taskspec.Job) map[string]string
	// Abilities are what its jobs may ask beyond one process per task.
	Abilities() Abilities
	// WorkersReplacedInPlace reports whether a failed worker of job may be
	// replaced alone at its address (its node, its port) while the others
	// wait for it, instead of restarting the whole cluster: workers that
	// are servers others dispatch to (TensorFlow's ParameterServerStrategy).
	WorkersReplacedInPlace(job taskspec.Job) bool
	// JobService is the side service job needs for its whole life, nil
	// for none: the ApplicationMaster (or run --local) serves it on a port
	// of its host, where it outlives any task, and gives its host:port to
	// every task's Launch as Task.JobService. key is the service's secret,
	// new for each ApplicationMaster attempt (and run --local): each task
	// gets its own JobServiceToken under it, sealed, so a service whose
	// protocol carries one can tell the job's tasks from strangers.
	JobService(job taskspec.Job, key []byte) SideService
}

// Rule is a success rule a framework defines.
type Rule struct {
	// Name is what --success takes.
	Name taskspec.SuccessRule
	// Policy is the rule for job, which the AM's core consults after every
	// event.
	Policy func(job taskspec.Job) success.Policy
}

// SideService is a server a framework's tasks need beside their programs:
// a rendezvous store, a tracker, a coordinator. Its host hands it a
// listener and a log, and runs it until ctx ends; what it speaks there is
// its own. Any process that reaches the port may connect, so it must bound
// what a client can make it hold (connections, memory).
type SideService interface {
	Serve(ctx context.Context, ln net.Listener, logf func(format string, args ...any)) error
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
	// ElasticReplacements bounds how many lost workers an elastic job replaces (with Elastic):
	// past that its surviving processes could not meet again.
	ElasticReplacements int
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
	// MinWorkers, above 0, is an elastic job's --min-workers.
	MinWorkers int
	// ElasticLastCall, when set, is how long an elastic job's members that
	// have met MinWorkers wait for more before a round starts
	// (--elastic-last-call); 0 leaves the framework's default.
	ElasticLastCall time.Duration
	// JobService is the host:port of the job's side service
	// (Framework.JobService), "" when it has none.
	JobService string
	// JobServiceToken proves this task to the job's side service:
	// JobServiceToken(key, ID) under the service's key, "" when the job has
	// no service. It reaches the launcher sealed, as --secret-env values do.
	JobServiceToken string
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
	// Serve, when set, is a side service the launcher itself runs on the
	// task's reserved port for as long as it lives: the reserved socket
	// becomes the service's listener, so the port never leaves the
	// launcher.
	Serve SideService
	// PythonHook, when set, is Python source the program's interpreter
	// runs at start: the launcher writes it as sitecustomize.py into a
	// directory of its own, first on PYTHONPATH.
	PythonHook string
	// RestartsProcesses: the program starts its processes again when one
	// fails (torchrun's elastic agent), so a process's no-restart request
	// (contract.EnvNoRestartFile) would be repeated, not heeded: the
	// launcher watches the file while the program runs and ends the
	// program once a process has written it.
	RestartsProcesses bool
	// Describe is what the launcher logs about the launch (one line).
	Describe string
}

// LookupEnv reads name from env ("NAME=value" entries, the last wins).
func LookupEnv(env []string, name string) (string, bool) {
	prefix := name + "="
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], prefix); ok {
			return v, true
		}
	}
	return "", false
}

// Workers returns the workers' addresses, by index, for frameworks whose
// tasks are all workers, checking that t is one of them.
func Workers(t Task) ([]string, error) {
	ws := t.Cluster[taskspec.Worker]
	if t.ID.Type != taskspec.Worker {
		return nil, fmt.Errorf("%s is not a worker task", t.ID)
	}
	if t.ID.Index < 0 || t.ID.Index >= len(ws) {
		return nil, fmt.Errorf("%s is not in the cluster (%d workers)", t.ID, len(ws))
	}
	return ws, nil
}

// jobServiceTokenPurpose is the domain of the tokens' MACs (package
// reqsign's convention: a key of one use is never valid in another).
const jobServiceTokenPurpose = "tfyarn-job-service-token v1\n"

// JobServiceTokenLen is how many hex digits a token has: 128 bits of
// HMAC-SHA256.
const JobServiceTokenLen = 32

// NewJobServiceKey is a fresh key for a job's side service: 32 random
// bytes, never written anywhere, gone with the process that serves it.
func NewJobServiceKey() ([]byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("the job service's key: %w", err)
	}
	return key, nil
}

// JobServiceToken is task's token for the job's side service under key:
// hex of HMAC-SHA256, cut to 128 bits. Whoever reads a token can pose as
// that one task to that one service while it serves (an ApplicationMaster
// attempt); the key itself never leaves the service's host.
func JobServiceToken(key []byte, task taskspec.TaskID) string {
	return hex.EncodeToString(reqsign.DeriveKey(key, jobServiceTokenPurpose+task.String()))[:JobServiceTokenLen]
}

// CheckJobServiceToken reports whether token is task's under key, in
// constant time. An empty key proves nothing.
func CheckJobServiceToken(key []byte, task taskspec.TaskID, token string) bool {
	if len(key) < reqsign.MinKeySize {
		return false
	}
	return hmac.Equal([]byte(JobServiceToken(key, task)), []byte(token))
}
