package framework

import (
	_ "embed"
	"fmt"

	"github.com/tfyarn/tfyarn/taskspec"
)

// JAX's variables: jax.distributed.initialize() with no arguments reads
// them.
const (
	EnvJAXCoordinator  = "JAX_COORDINATOR_ADDRESS"
	EnvJAXNumProcesses = "JAX_NUM_PROCESSES"
	EnvJAXProcessID    = "JAX_PROCESS_ID"
)

// jaxHook is the program's sitecustomize: jax.distributed.initialize()
// reads JAX_COORDINATOR_ADDRESS itself, but takes the process count and id
// only from its cluster environments (Slurm, Open MPI, ...), so the hook
// registers one more, which reads JAX_NUM_PROCESSES and JAX_PROCESS_ID.
//
//go:embed jax_sitecustomize.py
var jaxHook string

// jax gives each worker task its process id and worker:0's address as the
// coordinator's: process 0 hosts JAX's coordination service there, on the
// port its launcher reserved and holds until the service listens (a gRPC
// server binds with SO_REUSEPORT).
type jax struct{}

func (jax) Name() string { return JAX }

func (jax) TaskTypes() []taskspec.TaskType { return []taskspec.TaskType{taskspec.Worker} }

// Success: every process must exit 0.
func (jax) Success() taskspec.SuccessRule { return taskspec.SuccessAll }

// Reserved: none (the JAX_* variables a job sets are replaced in its tasks).
func (jax) Reserved() []string { return nil }

// Abilities: one process per task, every worker needed.
func (jax) Abilities() Abilities { return Abilities{} }

func (jax) Launch(t Task) (Launch, error) {
	ws, err := workers(t)
	if err != nil {
		return Launch{}, fmt.Errorf("jax: %w", err)
	}
	return Launch{
		Argv: t.Argv,
		Set: map[string]string{
			EnvJAXCoordinator:  ws[0],
			EnvJAXNumProcesses: itoa(len(ws)),
			EnvJAXProcessID:    itoa(t.ID.Index),
		},
		HoldPort:   t.ID.Index == 0,
		PythonHook: jaxHook,
		Describe:   fmt.Sprintf("JAX process %d of %d, coordinator %s", t.ID.Index, len(ws), ws[0]),
	}, nil
}
