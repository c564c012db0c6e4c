package localrun

import (
	"io"
	"os"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Options tune a local run. The zero value is ready to use.
type Options struct {
	// Stdout and Stderr receive the tasks' output, each line prefixed with
	// its task ("[worker:1] ..."); default os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer
	// Python runs Job.Script (default "python3", found in PATH): pass a
	// venv's bin/python to use that environment.
	Python string
	// Dir is the programs' working directory ("": the current one).
	Dir string
	// Env is the programs' base environment (nil: this process'); the job's
	// Env, the task's identity and TF_CONFIG are added to it.
	Env []string
	// Host is the address the tasks reach each other by (default
	// 127.0.0.1, which needs no name resolution).
	Host string
	// RegistrationTimeout bounds how long the tasks have to meet once the
	// first has registered (default 2 minutes: importing TensorFlow takes
	// seconds per process and local tasks share the CPUs).
	RegistrationTimeout time.Duration
	// Success is the success rule, taskspec.SuccessChief or
	// taskspec.SuccessAll; "" picks the job's framework's
	// (frameworks.SuccessOf), as the ApplicationMaster does.
	Success taskspec.SuccessRule
	// ProgramStopGrace is how long a stopped program has between SIGTERM and
	// SIGKILL (default 10 s).
	ProgramStopGrace time.Duration
	// WorkerGrace is how long, under the SuccessChief rule
	// (tensorflow.ChiefPolicy), the tasks let linger after the decider's
	// success (the workers of a job that is not ParameterServerStrategy-
	// shaped) have to end by themselves before they are stopped (default
	// taskspec.DefaultWorkerGrace, 10 s). A stopped task's launcher is
	// cancelled if it is still running ProgramStopGrace + 5 s after the stop.
	WorkerGrace time.Duration
}

const (
	// stuckMargin is how long past its grace period a stopped task may take
	// before its launcher is cancelled as well (the core's hard stop): the
	// stop order travels by long-poll, and a launcher that missed it must
	// not hang the run.
	stuckMargin = 5 * time.Second
)

func (o *Options) setDefaults() {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Python == "" {
		o.Python = "python3"
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Host == "" {
		o.Host = "127.0.0.1"
	}
	if o.RegistrationTimeout <= 0 {
		o.RegistrationTimeout = taskspec.DefaultLocalRendezvousTimeout
	}
	if o.ProgramStopGrace <= 0 {
		o.ProgramStopGrace = taskspec.ProgramStopGrace
	}
	if o.WorkerGrace <= 0 {
		o.WorkerGrace = taskspec.DefaultWorkerGrace
	}
}
