package localrun

import (
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Status is a local job's final status, named like YARN's.
type Status string

const (
	StatusSucceeded Status = "SUCCEEDED"
	StatusFailed    Status = "FAILED"
	StatusKilled    Status = "KILLED"
)

// Result is how a local job ended.
type Result struct {
	Status Status
	// Diagnostics says why: the decider's exit, or the failed tasks with
	// their exit codes and last stderr lines.
	Diagnostics string
	Tasks       []TaskResult // in job order
	Duration    time.Duration
	// Restarts is how many restarts the job had (taskspec.RestartPolicy);
	// the diagnostics name the failure behind each.
	Restarts int
	// ResultFiles are the result files the tasks' programs left (contract.EnvResultFile), by
	// task (worker:0), in a directory of the run's own that stays after it.
	ResultFiles map[string]string
}

// TaskResult is how one task ended.
type TaskResult struct {
	Task taskspec.TaskID
	// Attempt is 0 for the task's first run, one more per restart.
	Attempt int
	// Addr is the host:port the task registered ("" if it never did).
	Addr string
	// ExitCode is the program's code (128+N for signal N), or the
	// launcher's when the program never started (see LauncherError).
	ExitCode int
	// Stopped: ended by a stop order once the job was decided, or killed.
	Stopped bool
	// StderrTail is the last lines of the program's stderr.
	StderrTail []string
	// LauncherError explains a task whose program never ran or whose
	// launcher failed (rendezvous, port reservation).
	LauncherError string
	// Failure is one line saying why a task failed on its own (its name,
	// exit code and last stderr line), as the ApplicationMaster's core
	// words it; empty when it succeeded or was stopped.
	Failure string
	Ended   time.Duration // since the start of the run
}

// Task returns one task's result.
func (r *Result) Task(id taskspec.TaskID) (TaskResult, bool) {
	for _, t := range r.Tasks {
		if t.Task == id {
			return t, true
		}
	}
	return TaskResult{}, false
}
