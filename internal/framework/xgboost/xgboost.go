// Package xgboost is XGBoost behind the framework seam: a tracker of
// XGBoost's collective (its RabitTracker protocol) that the ApplicationMaster
// serves for the whole job, and the variables that point every worker at it.
package xgboost

import (
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The variables each worker gets: xgboost.collective's arguments, named in
// upper case as XGBoost's documentation names them for the environment.
// XGBoost itself reads none of them: the script passes them on
// (examples/xgboost_dist.py, tracker_args).
const (
	EnvTrackerURI  = "DMLC_TRACKER_URI"
	EnvTrackerPort = "DMLC_TRACKER_PORT"
	EnvTaskID      = "DMLC_TASK_ID"
	EnvNumWorker   = "DMLC_NUM_WORKER"
)

// TaskID is worker index's task_id for XGBoost's tracker: its task, then
// its token (framework.JobServiceToken), "worker:N:TOKEN".
func TaskID(index int, token string) string {
	return taskspec.TaskID{Type: taskspec.Worker, Index: index}.String() + ":" + token
}

// Name is what --framework takes.
const Name = "xgboost"

// xgBoost points each worker at the job's tracker (Framework.JobService),
// which outlives any worker: XGBoost's workers report their shutdown to it
// as they finish, worker:0 included.
type xgBoost struct{}

// New returns the framework.
func New() framework.Framework { return xgBoost{} }

func (xgBoost) Name() string { return Name }

func (xgBoost) TaskTypes() []taskspec.TaskType { return []taskspec.TaskType{taskspec.Worker} }

// Success: every worker must exit 0.
func (xgBoost) Success(taskspec.Job) taskspec.SuccessRule { return taskspec.SuccessAll }

// Rules: none of its own.
func (xgBoost) Rules() []framework.Rule { return nil }

// Reserved: the variables Launch sets, which replace the job's.
func (xgBoost) Reserved(taskspec.Job) map[string]string {
	return map[string]string{
		EnvTrackerURI:  "the tracker's host",
		EnvTrackerPort: "the tracker's port",
		EnvTaskID:      "the worker's task and its proof, worker:N:TOKEN",
		EnvNumWorker:   "the number of workers",
	}
}

// Abilities: one process per task, every worker needed.
func (xgBoost) Abilities() framework.Abilities { return framework.Abilities{} }

// WorkersReplacedInPlace: no, a lost worker restarts the cluster.
func (xgBoost) WorkersReplacedInPlace(taskspec.Job) bool { return false }

// JobService: the tracker, for the job's workers, which hears only those
// whose task_id carries their task's token under key.
func (xgBoost) JobService(job taskspec.Job, key []byte) framework.SideService {
	workers := 0
	if g, ok := job.Group(taskspec.Worker); ok {
		workers = g.Instances
	}
	return Tracker{Workers: workers, Key: key}
}

func (xgBoost) Launch(t framework.Task) (framework.Launch, error) {
	ws, err := framework.Workers(t)
	if err != nil {
		return framework.Launch{}, fmt.Errorf("xgboost: %w", err)
	}
	host, port, err := net.SplitHostPort(t.JobService)
	if err != nil {
		return framework.Launch{}, fmt.Errorf("xgboost: no tracker address (%q): the ApplicationMaster serves it", t.JobService)
	}
	if t.JobServiceToken == "" {
		return framework.Launch{}, errors.New("xgboost: no token for the tracker: the ApplicationMaster sends it with the program")
	}
	return framework.Launch{
		Argv: t.Argv,
		Set: map[string]string{
			EnvTrackerURI:  host,
			EnvTrackerPort: port,
			// XGBoost sends its task_id in every hello to the tracker: the
			// one field of its protocol that can carry a proof.
			EnvTaskID:    TaskID(t.ID.Index, t.JobServiceToken),
			EnvNumWorker: strconv.Itoa(len(ws)),
		},
		Describe: fmt.Sprintf("XGBoost worker %d of %d, tracker at %s", t.ID.Index, len(ws), t.JobService),
	}, nil
}
