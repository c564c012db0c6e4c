// Package jax is JAX behind the framework seam: the variables
// jax.distributed.initialize() reads, and a hook that makes it read them.
package jax

import (
	_ "embed"
	"fmt"
	"strconv"

	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/taskspec"
)

// JAX's variables: jax.distributed.initialize() with no arguments reads
// them.
const (
	EnvJAXCoordinator  = "JAX_COORDINATOR_ADDRESS"
	EnvJAXNumProcesses = "JAX_NUM_PROCESSES"
	EnvJAXProcessID    = "JAX_PROCESS_ID"
)

// Hook is the program's sitecustomize: jax.distributed.initialize()
// reads JAX_COORDINATOR_ADDRESS itself, but takes the process count and id
// only from its cluster environments (Slurm, Open MPI, ...), so the hook
// registers one more, which reads JAX_NUM_PROCESSES and JAX_PROCESS_ID.
//
//go:embed jax_sitecustomize.py
var Hook string

// jax gives each worker task its process id and worker:0's address as the
// coordinator's: process 0 hosts JAX's coordination service there, on the
// port its launcher reserved and holds until the service listens (a gRPC
// server binds with SO_REUSEPORT).
type jax struct{}

// Name is what --framework takes.
const Name = "jax"

// New returns the framework.
func New() framework.Framework { return jax{} }

func (jax) Name() string { return Name }

func (jax) TaskTypes() []taskspec.TaskType { return []taskspec.TaskType{taskspec.Worker} }

// Success: every process must exit 0.
func (jax) Success(taskspec.Job) taskspec.SuccessRule { return taskspec.SuccessAll }

// Reserved: the variables Launch sets, which replace the job's.
func (jax) Reserved(taskspec.Job) map[string]string {
	return map[string]string{
		EnvJAXCoordinator:  "worker:0's address",
		EnvJAXNumProcesses: "the number of workers",
		EnvJAXProcessID:    "the worker's index",
	}
}

// Abilities: one process per task, every worker needed.
// Rules: none of its own.
func (jax) Rules() []framework.Rule { return nil }

// WorkersReplacedInPlace: no, a lost worker restarts the cluster (or, in
// an elastic job, is replaced as a new member).
func (jax) WorkersReplacedInPlace(taskspec.Job) bool { return false }

func (jax) Abilities() framework.Abilities { return framework.Abilities{} }

// JobService: none.
func (jax) JobService(taskspec.Job, []byte) framework.SideService { return nil }

func (jax) Launch(t framework.Task) (framework.Launch, error) {
	ws, err := framework.Workers(t)
	if err != nil {
		return framework.Launch{}, fmt.Errorf("jax: %w", err)
	}
	return framework.Launch{
		Argv: t.Argv,
		Set: map[string]string{
			EnvJAXCoordinator:  ws[0],
			EnvJAXNumProcesses: strconv.Itoa(len(ws)),
			EnvJAXProcessID:    strconv.Itoa(t.ID.Index),
		},
		HoldPort:   t.ID.Index == 0,
		PythonHook: Hook,
		Describe:   fmt.Sprintf("JAX process %d of %d, coordinator %s", t.ID.Index, len(ws), ws[0]),
	}, nil
}
