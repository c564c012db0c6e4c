// Package pytorch is PyTorch behind the framework seam: torchrun (c10d
// rendezvous) in every worker container, elastic with --min-workers.
package pytorch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/torchstore"
	"github.com/tfyarn/tfyarn/taskspec"
)

// pyTorch runs torchrun in every container: one elastic agent per worker
// task, starting ProcsPerNode processes with torchrun's own variables
// (MASTER_ADDR, MASTER_PORT, RANK, LOCAL_RANK, WORLD_SIZE, GROUP_RANK,
// ROLE_RANK, TORCHELASTIC_*: exactly what scripts written for torchrun
// read, from torchrun itself). The agents meet through the c10d
// rendezvous backend at worker:0's address, where worker:0's launcher
// serves the store on the port it reserved (Launch.Serve): every
// agent is a client of it (is_host=false), so the port never changes
// hands. The first agent of the rendezvous then opens the processes'
// store on a port the kernel picks for it (port 0), which leaves no window
// either.
type pyTorch struct{}

// Name is what --framework takes.
const Name = "pytorch"

// New returns the framework.
func New() framework.Framework { return pyTorch{} }

func (pyTorch) Name() string { return Name }

func (pyTorch) TaskTypes() []taskspec.TaskType { return []taskspec.TaskType{taskspec.Worker} }

// Success: every worker process must exit 0; torchrun exits non-zero as
// soon as one of its processes fails, and the job fails with it.
func (pyTorch) Success(taskspec.Job) taskspec.SuccessRule { return taskspec.SuccessAll }

// Reserved: what torchrun (torch 2.13, LocalElasticAgent and
// start_processes) sets in each process it starts, replacing the
// environment's; the PET_* defaults of the torchrun options Launch passes,
// which the options override; and, for an elastic job, the switch Launch
// sets. torchrun keeps a user's OMP_NUM_THREADS, TORCH_NCCL_ASYNC_ERROR_HANDLING
// and CUDA_VISIBLE_DEVICES (unless told to renumber the GPUs, which
// tfyarn does not): those are the job's.
func (pyTorch) Reserved(job taskspec.Job) map[string]string {
	out := map[string]string{}
	for _, name := range torchrunSets {
		out[name] = "torchrun sets it in each process"
	}
	for name, option := range torchrunOptions {
		out[name] = "tfyarn passes torchrun " + option
	}
	if job.MinWorkers > 0 {
		out[EnvTorchNoSharedStore] = "an elastic job's agents need a new store each round"
	}
	return out
}

// torchrunSets are the variables torchrun's agent gives each process.
var torchrunSets = []string{
	"MASTER_ADDR", "MASTER_PORT",
	"RANK", "LOCAL_RANK", "GROUP_RANK", "ROLE_RANK", "ROLE_NAME",
	"WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_WORLD_SIZE", "ROLE_WORLD_SIZE",
	"TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID",
	"TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_ERROR_FILE",
}

// torchrunOptions are the variables torchrun reads an option from when the
// command line lacks it (PET_<option>), for the options Launch always
// passes.
var torchrunOptions = map[string]string{
	"PET_NNODES":         "--nnodes",
	"PET_NPROC_PER_NODE": "--nproc-per-node, tfyarn's own --nproc-per-node",
	"PET_RDZV_BACKEND":   "--rdzv-backend",
	"PET_RDZV_ENDPOINT":  "--rdzv-endpoint",
	"PET_RDZV_ID":        "--rdzv-id",
	"PET_RDZV_CONF":      "--rdzv-conf",
	"PET_MAX_RESTARTS":   "--max-restarts",
}

// Rules: none of its own.
func (pyTorch) Rules() []framework.Rule { return nil }

// WorkersReplacedInPlace: no, a lost worker restarts the cluster (or, in
// an elastic job, is replaced as a new member).
func (pyTorch) WorkersReplacedInPlace(taskspec.Job) bool { return false }

func (pyTorch) Abilities() framework.Abilities {
	// Each loss of a worker costs every surviving torchrun agent one of its
	// ElasticAgentRestarts (a member joining costs none).
	return framework.Abilities{ScriptOnly: "runs a script under torchrun", ProcsPerNode: "torchrun's processes per container", Elastic: "elastic torchrun", ElasticReplacements: ElasticAgentRestarts}
}

// JobService: an elastic job's agents meet on a store the
// ApplicationMaster serves, which outlives any worker (elasticLaunch).
// The key is of no use to it: torch's TCPStore protocol carries no proof
// of who the client is.
func (pyTorch) JobService(job taskspec.Job, _ []byte) framework.SideService {
	if job.MinWorkers > 0 {
		return RendezvousStore{}
	}
	return nil
}

// RendezvousStore is the side service of torchrun's c10d rendezvous: a
// key-value store in torch's TCPStore protocol (package torchstore, which
// bounds its connections and memory).
type RendezvousStore struct{}

// Serve implements framework.SideService.
func (RendezvousStore) Serve(ctx context.Context, ln net.Listener, logf func(string, ...any)) error {
	s := torchstore.New()
	s.Logf = logf
	return s.Serve(ctx, ln)
}

// TorchRunModule is how the launcher starts torchrun: as a module of the
// job's Python (the torchrun script's own entry point), so that the
// interpreter is the one the job names.
const TorchRunModule = "torch.distributed.run"

func (pyTorch) Launch(t framework.Task) (framework.Launch, error) {
	ws, err := framework.Workers(t)
	if err != nil {
		return framework.Launch{}, fmt.Errorf("pytorch: %w", err)
	}
	if len(t.Argv) < 2 {
		return framework.Launch{}, errors.New("pytorch: the program is not an interpreter and a script")
	}
	nproc := t.ProcsPerNode
	if nproc < 1 {
		nproc = 1
	}
	runID := t.RunID
	if runID == "" {
		runID = "tfyarn"
	}
	if t.MinWorkers > 0 {
		return elasticLaunch(t, len(ws), nproc, runID)
	}
	args := []string{
		t.Argv[0], "-m", TorchRunModule,
		"--nnodes=" + strconv.Itoa(len(ws)),
		"--nproc-per-node=" + strconv.Itoa(nproc),
		"--rdzv-backend=c10d",
		"--rdzv-endpoint=" + ws[0],
		"--rdzv-id=" + runID,
		// The store is worker:0's launcher's: no agent hosts it, even one
		// on the store's machine.
		"--rdzv-conf=is_host=false",
		// Restarts are the ApplicationMaster's (--max-restarts), not the
		// agents'.
		"--max-restarts=0",
	}
	args = append(args, t.Argv[1:]...)
	var serve framework.SideService
	if t.ID.Index == 0 {
		serve = RendezvousStore{}
	}
	return framework.Launch{
		Argv:     args,
		Serve:    serve,
		Describe: fmt.Sprintf("torchrun node of %d, %d process(es), rendezvous at %s (%s)", len(ws), nproc, ws[0], runID),
	}, nil
}

// EnvTorchNoSharedStore is torch's switch that makes every rendezvous
// round publish a new store for the processes.
const EnvTorchNoSharedStore = "TORCH_DISABLE_SHARE_RDZV_TCP_STORE"

// ElasticAgentRestarts is how many times an elastic job's torchrun agents
// may start their processes again: each change of the job's members (a
// worker lost, one joining) is one.
const ElasticAgentRestarts = 10

// elasticRendezvousConf is an elastic torchrun's --rdzv-conf: its agents
// are no store's host (the AM's is), and wait lastCall (torch's
// last_call_timeout, whole seconds) for more members once the minimum has
// met, when set.
func elasticRendezvousConf(lastCall time.Duration) string {
	conf := "is_host=false"
	if s := int(lastCall / time.Second); s > 0 {
		conf += ",last_call_timeout=" + strconv.Itoa(s)
	}
	return conf
}

// lastCallNote says a last call other than torch's default, for the launcher's log.
func lastCallNote(lastCall time.Duration) string {
	if lastCall <= 0 {
		return ""
	}
	return ", last call " + lastCall.String()
}

// elasticLaunch is torchrun with --nnodes MIN:MAX on the store the
// ApplicationMaster serves, which outlives any worker: when one is lost,
// the others' agents meet again without it (at least MIN) and start their
// processes again, TORCHELASTIC_RESTART_COUNT one higher.
func elasticLaunch(t framework.Task, nodes, nproc int, runID string) (framework.Launch, error) {
	if t.JobService == "" {
		return framework.Launch{}, errors.New("pytorch: an elastic job without the ApplicationMaster's rendezvous store (client and AM binaries differ?)")
	}
	args := []string{
		t.Argv[0], "-m", TorchRunModule,
		"--nnodes=" + strconv.Itoa(t.MinWorkers) + ":" + strconv.Itoa(nodes),
		"--nproc-per-node=" + strconv.Itoa(nproc),
		"--rdzv-backend=c10d",
		"--rdzv-endpoint=" + t.JobService,
		"--rdzv-id=" + runID,
		"--rdzv-conf=" + elasticRendezvousConf(t.ElasticLastCall),
		"--max-restarts=" + strconv.Itoa(ElasticAgentRestarts),
	}
	args = append(args, t.Argv[1:]...)
	return framework.Launch{
		Argv: args,
		// torch (2.13) keeps the processes' store of the first round on
		// its rank-0 agent and, on the other agents, keeps its address for
		// every later round: with that agent's node lost, the survivors'
		// processes would wait for it for ever. torch's own opt-out makes
		// every round's rank 0 publish a fresh one. Its port is picked
		// free by that agent and bound by its rank-0 process a moment
		// later, after importing torch: a window another process could
		// use, which fails the round, and the agents meet again
		// (ElasticAgentRestarts).
		Set: map[string]string{EnvTorchNoSharedStore: "1"},
		// Its agent restarts its processes (ElasticAgentRestarts), also
		// one that asked not to be restarted.
		RestartsProcesses: true,
		Describe:          fmt.Sprintf("elastic torchrun node, %d to %d nodes, %d process(es), rendezvous at %s (%s)%s", t.MinWorkers, nodes, nproc, t.JobService, runID, lastCallNote(t.ElasticLastCall)),
	}, nil
}
