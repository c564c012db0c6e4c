package taskspec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// TaskType is the role of a task in a distributed job. The types are
// TensorFlow's (a framework allows a subset: PyTorch and JAX jobs have
// workers only). A plain command (`tfyarn run --worker 3x1c,256m -- COMMAND`)
// uses Worker: the AM treats all types alike until the job's success rule
// (SuccessChief) gives them meaning.
type TaskType string

// The task types, in job order.
const (
	Chief       TaskType = "chief"
	Worker      TaskType = "worker"
	PS          TaskType = "ps"
	Evaluator   TaskType = "evaluator"
	TensorBoard TaskType = "tensorboard"
)

// jobOrder ranks task types: the order groups are listed, asked for (the AM
// gives earlier groups higher YARN priority) and printed.
var jobOrder = map[TaskType]int{Chief: 0, Worker: 1, PS: 2, Evaluator: 3, TensorBoard: 4}

// TaskTypes returns every task type in job order: chief, worker, ps,
// evaluator, tensorboard.
func TaskTypes() []TaskType { return []TaskType{Chief, Worker, PS, Evaluator, TensorBoard} }

// Known reports whether t is one of the task types tfyarn schedules.
func (t TaskType) Known() bool { _, ok := jobOrder[t]; return ok }

// InCluster reports whether tasks of type t are in the job's cluster: the
// rendezvous waits for their addresses and gives them to every task, and
// losing one stops the others (restarts, adoption). The evaluator and
// TensorBoard are side tasks: only in their own task's view (TensorFlow's
// TF_CONFIG names the evaluator in its "task" only; it must not be waited
// for by the training session), their loss restarts only themselves.
func (t TaskType) InCluster() bool { return t == Chief || t == Worker || t == PS }

// ParseTaskType accepts a task type name in any case.
func ParseTaskType(s string) (TaskType, error) {
	t := TaskType(strings.ToLower(strings.TrimSpace(s)))
	if !t.Known() {
		return "", fmt.Errorf("unknown task type %q; expected one of %s", s, typeList())
	}
	return t, nil
}

func typeList() string {
	names := make([]string, 0, len(jobOrder))
	for _, t := range TaskTypes() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}

// TaskID names one task: its type and its index within its group.
type TaskID struct {
	Type  TaskType
	Index int
}

// String renders the form users type and logs print: "worker:1".
func (id TaskID) String() string { return string(id.Type) + ":" + strconv.Itoa(id.Index) }

// ParseTaskID parses "worker:1". A bare type ("chief") means index 0, since
// single-instance groups are the common case for --task filters.
func ParseTaskID(s string) (TaskID, error) {
	typePart, indexPart, hasIndex := strings.Cut(strings.TrimSpace(s), ":")
	t, err := ParseTaskType(typePart)
	if err != nil {
		return TaskID{}, fmt.Errorf("task %q: %w", s, err)
	}
	if !hasIndex {
		return TaskID{Type: t}, nil
	}
	n, ok := parseWhole(indexPart)
	if !ok || n > MaxInstances {
		return TaskID{}, fmt.Errorf("task %q: bad index %q; expected <type>:<index>, e.g. worker:1", s, indexPart)
	}
	return TaskID{Type: t, Index: int(n)}, nil
}

// Resources is what one task's container asks YARN for. The integer widths
// follow YARN's ResourceProto.
type Resources struct {
	VCores    int32
	MemoryMiB int64
	GPUs      int64 // yarn.io/gpu
}

// String reads well in messages: "4 vcores, 2 GiB, 1 GPU".
func (r Resources) String() string {
	s := fmt.Sprintf("%d vcores, %s", r.VCores, formatMemory(r.MemoryMiB))
	if r.GPUs > 0 {
		s += ", " + plural(r.GPUs, "GPU")
	}
	return s
}

// TaskGroup is every task of one type: Instances identical containers.
type TaskGroup struct {
	Type      TaskType
	Instances int
	Resources Resources
	// NodeLabel is a YARN node label expression for this group's containers;
	// empty means the job's NodeLabel.
	NodeLabel string
}

// Spec renders g in the spec grammar, canonically: ParseSpec(g.Type,
// g.Spec()) gives g back (NodeLabel aside, which is not part of a spec).
func (g TaskGroup) Spec() string {
	var b strings.Builder
	if g.Instances != 1 {
		fmt.Fprintf(&b, "%dx", g.Instances)
	}
	fmt.Fprintf(&b, "%dc", g.Resources.VCores)
	if g.Resources.MemoryMiB%1024 == 0 {
		fmt.Fprintf(&b, ",%dg", g.Resources.MemoryMiB/1024)
	} else {
		fmt.Fprintf(&b, ",%dm", g.Resources.MemoryMiB)
	}
	if g.Resources.GPUs > 0 {
		fmt.Fprintf(&b, ",%dgpu", g.Resources.GPUs)
	}
	return b.String()
}

// TaskIDs lists the group's tasks by index.
func (g TaskGroup) TaskIDs() []TaskID {
	ids := make([]TaskID, g.Instances)
	for i := range ids {
		ids[i] = TaskID{Type: g.Type, Index: i}
	}
	return ids
}

// SortGroups puts groups in job order (chief, worker, ps, evaluator,
// tensorboard), unknown types last, keeping the given order among equals.
func SortGroups(groups []TaskGroup) {
	rank := func(t TaskType) int {
		if r, ok := jobOrder[t]; ok {
			return r
		}
		return len(jobOrder)
	}
	sort.SliceStable(groups, func(i, j int) bool { return rank(groups[i].Type) < rank(groups[j].Type) })
}

// Job is everything the AM needs to run a job's tasks. Staging (files, the
// packed environment) belongs to the client; this is what survives into the
// cluster.
type Job struct {
	Name    string // YARN application name
	Queue   string // YARN queue; empty means the cluster's default
	AppType string // YARN application type; empty means DefaultAppType

	// Tasks lists the task groups, at most one per type, normally in job
	// order (see SortGroups).
	Tasks []TaskGroup

	// Exactly one of Command and Script is set. Command is a program run as
	// is in every task container (generic jobs); Script is a Python script
	// run by the job's Python environment.
	Command string
	Script  string
	// Args follow Command or Script. The job's framework may rewrite them
	// per task (TensorFlow fills in the TF1 placeholders {ps_hosts},
	// {worker_hosts}, {job_name} and {task_index}).
	Args []string

	// Env is added to every task's environment, except the variables tfyarn
	// and the job's framework set for each task (TF_CONFIG, TFYARN_TASK, ...),
	// which it may not name.
	Env map[string]string
	// NodeLabel is the default node label expression for groups that set
	// none.
	NodeLabel string
	// Restarts says when failed tasks run again instead of failing the job.
	Restarts RestartPolicy `json:",omitempty"`
	// Spread (--spread) keeps tasks apart: a task type, so that no two
	// tasks of that type share a node, or SpreadAll, so that no two of the
	// cluster's tasks (chief, worker, ps) do; empty for none. See spread.go.
	Spread string `json:",omitempty"`
	// StartAfter holds some types' programs back until others' started
	// (--start-after worker=ps); nil starts every program with the spec.
	StartAfter StartOrder `json:",omitempty"`
	// Affinities place some types' tasks by where others run (--colocate
	// ps=worker, --apart ps=worker); nil for none. See affinity.go.
	Affinities Affinities `json:",omitempty"`
	// Framework (--framework) names what launches the program in each
	// task (package framework): "" or "tensorflow", "pytorch", "jax".
	Framework string `json:",omitempty"`
	// ProcsPerNode (--nproc-per-node) is how many processes a task's
	// container starts, for a framework that takes it (PyTorch's); 0 means
	// one.
	ProcsPerNode int `json:",omitempty"`
	// MinWorkers (--min-workers), above 0, makes a job elastic, for a
	// framework that takes it (PyTorch's): it goes on while at least this
	// many workers are left.
	MinWorkers int `json:",omitempty"`
	// ElasticLastCall (--elastic-last-call), when set, is how long an
	// elastic job's members that have met --min-workers wait for more
	// before they start a round (torch's last_call_timeout; 0 leaves the
	// framework's default, torch's 30 s). Whole seconds.
	ElasticLastCall time.Duration `json:",omitempty"`
	// Images (--image) run task containers in Docker images through
	// YARN's Docker runtime: the key AllTypes ("") for every type, a type's
	// name for that type's own; nil runs every task on the default runtime.
	Images map[string]string `json:",omitempty"`
	// Mounts (--mount) are bind mounts into every task container that runs
	// in an image; the NodeManagers decide which sources they allow.
	Mounts []Mount `json:",omitempty"`
	// ExcludeNodes (--exclude-nodes) are hosts that get none of the job's
	// containers. MaxNodeFailures (--max-node-failures) is how many of
	// the job's task attempts may fail on one node before it is excluded
	// too: 0 means DefaultMaxNodeFailures, NoNodeExclusion never.
	ExcludeNodes    []string `json:",omitempty"`
	MaxNodeFailures int      `json:",omitempty"`
	// OOMGrow (--oom-grow), above 1, restarts a task YARN killed for its
	// memory with this many times the memory, up to the largest node of
	// its label; 0 keeps the memory.
	OOMGrow float64 `json:",omitempty"`
	// FailOnLog (--fail-on-log) and ExcludeNodeOnLog
	// (--exclude-node-on-log) are RE2 expressions matched against each
	// line the tasks' programs write to stderr: the first fails the job
	// with the line, the second fails the attempt and excludes its node.
	FailOnLog        string `json:",omitempty"`
	ExcludeNodeOnLog string `json:",omitempty"`
	// GPUIdle (--gpu-idle-timeout, --gpu-idle-threshold,
	// --gpu-idle-action) ends or warns a job whose GPUs all stay idle.
	GPUIdle GPUIdle `json:",omitzero"`
	// Checkpoint (--checkpoint) has tfyarn keep the tasks' checkpoints on
	// HDFS and restore them; nil for none. See docs/checkpoints.md.
	Checkpoint *Checkpoint `json:",omitempty"`
}

// Checkpoint is where and how tfyarn keeps a job's checkpoints
// (--checkpoint[=DIR], --checkpoint-keep, --checkpoint-fresh).
type Checkpoint struct {
	// Dir is an absolute HDFS directory; empty means
	// /user/<user>/.tfyarn/checkpoints/<job name>.
	Dir string `json:",omitempty"`
	// Keep is how many checkpoints of each task stay; 0 means 2.
	Keep int `json:",omitempty"`
	// Fresh starts from no checkpoint: those of earlier jobs are ignored.
	Fresh bool `json:",omitempty"`
}

// MaxCheckpointKeep bounds Checkpoint.Keep.
const MaxCheckpointKeep = 100

// GPUIdle is when a job's GPUs count as idle, and what then: Timeout
// (0: never) during which every sampled GPU of the job stays under
// Threshold percent (0 means DefaultGPUIdleThreshold); Warn only warns
// instead of failing the job.
type GPUIdle struct {
	Timeout   time.Duration `json:",omitempty"`
	Threshold float64       `json:",omitempty"`
	Warn      bool          `json:",omitempty"`
}

// DefaultGPUIdleThreshold is the utilisation, in percent, under which a
// GPU counts as idle.
const DefaultGPUIdleThreshold = 5

// DefaultMaxNodeFailures is how many failed task attempts exclude a node
// from a job that sets no MaxNodeFailures.
const DefaultMaxNodeFailures = 2

// NoNodeExclusion as MaxNodeFailures excludes no node for its failures
// (--max-node-failures 0).
const NoNodeExclusion = -1

// RestartPolicy is when a job's failed tasks run again (--max-restarts,
// --retry-exit-codes, --no-infra-restarts). The ApplicationMaster's core
// decides each restart; see appmaster/core's restart.go for what restarts
// what. The zero value is the default: exits that are not the program's
// fault restart, program failures do not.
type RestartPolicy struct {
	// Max is how many restarts caused by a program's failure the job
	// may have; 0 means a program's failure fails the job.
	Max int `json:",omitempty"`
	// RetryExitCodes, when set, are the only program exit codes that
	// restart (say 137 for an OOM-killed program, not 1 for a bug); empty
	// means any failure may.
	RetryExitCodes []int `json:",omitempty"`
	// NoInfraRestarts turns off the restarts that do not count: without it,
	// exits that are not the program's fault (YARN's preemption, lost or
	// decommissioned node, bad disks, kill by the RM) restart without
	// counting toward Max, up to MaxUncountedRestarts, whatever Max is.
	// With it they are failures like a program's: they count toward Max.
	NoInfraRestarts bool `json:",omitempty"`
}

// MaxUncountedRestarts bounds the restarts that do not count toward
// RestartPolicy.Max (preemption, lost nodes): a cluster that loses node
// after node still ends the job.
const MaxUncountedRestarts = 10

// Off reports whether no failure restarts anything.
func (p RestartPolicy) Off() bool { return p.Max == 0 && p.NoInfraRestarts }

// Retries reports whether a program's exit code may restart.
func (p RestartPolicy) Retries(code int) bool {
	if len(p.RetryExitCodes) == 0 {
		return code != 0
	}
	for _, c := range p.RetryExitCodes {
		if c == code {
			return true
		}
	}
	return false
}

// DefaultAppType is the YARN application type of tfyarn jobs, what `yarn
// application -list -appTypes` and `tfyarn list` filter on.
const DefaultAppType = "TFYARN"

// Group returns the job's group of type t.
func (j Job) Group(t TaskType) (TaskGroup, bool) {
	for _, g := range j.Tasks {
		if g.Type == t {
			return g, true
		}
	}
	return TaskGroup{}, false
}

// NodeLabelFor is the label expression g's containers are asked with: the
// group's own, else the job's.
func (j Job) NodeLabelFor(g TaskGroup) string {
	if g.NodeLabel != "" {
		return g.NodeLabel
	}
	return j.NodeLabel
}

// TaskCount is the number of tasks (containers) the job runs.
func (j Job) TaskCount() int {
	n := 0
	for _, g := range j.Tasks {
		n += g.Instances
	}
	return n
}

func formatMemory(mib int64) string {
	if mib > 0 && mib%1024 == 0 {
		return fmt.Sprintf("%d GiB", mib/1024)
	}
	return fmt.Sprintf("%d MiB", mib)
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
