// Package lightgbm is LightGBM behind the framework seam: each worker gets
// the network parameters of LightGBM's data-parallel training (machines,
// local_listen_port, num_machines) as variables.
package lightgbm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The variables each worker gets, named after LightGBM's parameters.
// LightGBM reads none of them itself: the script passes them in its params
// (examples/lightgbm_dist.py, network_params).
const (
	// EnvMachines is every worker's host:port, by index: machines.
	EnvMachines = "LIGHTGBM_MACHINES"
	// EnvListenPort is this worker's port (its reserved one):
	// local_listen_port.
	EnvListenPort = "LIGHTGBM_LOCAL_LISTEN_PORT"
	// EnvNumMachines is the number of workers: num_machines.
	EnvNumMachines = "LIGHTGBM_NUM_MACHINES"
	// EnvRank is the worker's index, its place in machines: LightGBM's rank.
	EnvRank = "LIGHTGBM_RANK"
)

// Name is what --framework takes.
const Name = "lightgbm"

// lightGBM gives each worker the others' addresses; each LightGBM listens on
// its own reserved port. LightGBM binds that port without SO_REUSEPORT, so
// the launcher cannot hold it until then: it frees it just before the
// program starts.
type lightGBM struct{}

// New returns the framework.
func New() framework.Framework { return lightGBM{} }

func (lightGBM) Name() string { return Name }

func (lightGBM) TaskTypes() []taskspec.TaskType { return []taskspec.TaskType{taskspec.Worker} }

// Success: every worker must exit 0.
func (lightGBM) Success(taskspec.Job) taskspec.SuccessRule { return taskspec.SuccessAll }

// Rules: none of its own.
func (lightGBM) Rules() []framework.Rule { return nil }

// Reserved: the variables Launch sets, which replace the job's.
func (lightGBM) Reserved(taskspec.Job) map[string]string {
	return map[string]string{
		EnvMachines:    "every worker's host:port",
		EnvListenPort:  "the worker's port",
		EnvNumMachines: "the number of workers",
		EnvRank:        "the worker's index",
	}
}

// Abilities: one process per task, every worker needed.
func (lightGBM) Abilities() framework.Abilities { return framework.Abilities{} }

// WorkersReplacedInPlace: no, a lost worker restarts the cluster.
func (lightGBM) WorkersReplacedInPlace(taskspec.Job) bool { return false }

// JobService: none; the workers connect to each other.
func (lightGBM) JobService(taskspec.Job, []byte) framework.SideService { return nil }

func (lightGBM) Launch(t framework.Task) (framework.Launch, error) {
	ws, err := framework.Workers(t)
	if err != nil {
		return framework.Launch{}, fmt.Errorf("lightgbm: %w", err)
	}
	return framework.Launch{
		Argv: t.Argv,
		Set: map[string]string{
			EnvMachines:    strings.Join(ws, ","),
			EnvListenPort:  strconv.Itoa(t.Port),
			EnvNumMachines: strconv.Itoa(len(ws)),
			EnvRank:        strconv.Itoa(t.ID.Index),
		},
		Describe: fmt.Sprintf("LightGBM machine %d of %d, listening on port %d", t.ID.Index, len(ws), t.Port),
	}, nil
}
