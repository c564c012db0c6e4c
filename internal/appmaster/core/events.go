package core

import (
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/containerexit"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Event is an input to the Machine: something the I/O loop observed. The
// loop turns RPC responses and requests into events; the machine never
// sees a proto, a socket or a clock.
type Event interface{ isEvent() }

// Registered: registerApplicationMaster succeeded. Limits come from its
// response (maximum_capability, resource_types); the machine fails the job
// at once if a group cannot fit instead of waiting forever for containers.
type Registered struct {
	Limits taskspec.ClusterLimits
}

// Resynced: the AM registered again after the RM asked it to resync (RM
// restart or failover). The new RM knows none of our asks, so the machine
// states the full ask table again.
type Resynced struct{}

// NodeRacks: the racks of nodes, by host, as the RM reports them in its
// NodeReports (getClusterNodes, allocate's updated_nodes). The machine
// keeps the latest rack of each host for the asks of in-place
// replacements (Ask.Rack).
type NodeRacks struct {
	Racks map[string]string
}

// Allocated carries allocate's newly allocated containers. Feed it before
// the same response's Completed events.
type Allocated struct {
	Containers []Container
}

// Container is a container the RM allocated, reduced to what the machine
// and the loop need. ID is Hadoop's string form ("container_..."); the loop
// keeps its own map back to the proto and the NMToken.
type Container struct {
	ID              string
	NodeID          string // NM RPC address, host:port
	NodeHTTPAddress string
	Resource        taskspec.Resources
	// AllocationRequestID and Priority echo the ask the container answers;
	// the machine matches on the id, falling back to the priority for RMs
	// that do not echo ids.
	AllocationRequestID int64
	Priority            int32
}

// ContainerStarted: the NM accepted startContainers for the container.
type ContainerStarted struct {
	ID string
}

// StartFailed: startContainers failed for the container (an RPC error or
// an entry in failed_requests).
type StartFailed struct {
	ID     string
	Reason string
}

// ContainerCompleted: the RM reported the container complete. ExitStatus
// is the process exit code when ≥ 0, or one of YARN's negative
// ContainerExitStatus values.
type ContainerCompleted struct {
	ID          string
	ExitStatus  int32
	Diagnostics string
	// ByLauncher: the task's launcher reported its program's exit, ahead
	// of the RM, which still holds the container (and its allocation
	// tags) until the NodeManager reports it.
	ByLauncher bool
	// LogRule, when set, is the job's rule a line of the program's stderr
	// matched, LogLine that line: the launcher ended the program for it
	// (logrules.go).
	LogRule LogRule
	LogLine string
	// NoRestart, when set with a program's failure, is why the program
	// said a restart cannot help (its no-restart file,
	// contract.EnvNoRestartFile): the failure does not restart.
	NoRestart string
}

// LogRule is a rule on the program's stderr lines (--fail-on-log,
// --exclude-node-on-log).
type LogRule string

// The log rules.
const (
	FailOnLog        LogRule = "fail-on-log"
	ExcludeNodeOnLog LogRule = "exclude-node-on-log"
)

// TaskRegistered: a task's launcher reported the address its TensorFlow
// server listens on (rendezvous).
type TaskRegistered struct {
	Task taskspec.TaskID
	Host string
	Port int
}

// Tick moves the machine's notion of time; timestamps in TaskStatus and
// policies' timeouts read it. It is the only source of time.
type Tick struct {
	Now time.Time
}

// KillRequested: the AM process is being stopped from outside. The loop
// steps it, once, as soon as it sees its context cancelled (SIGTERM or
// SIGINT), which is how YARN ends the AM container on `tfyarn kill` or
// `yarn application -kill`, on preemption of the AM or when its
// NodeManager shuts down. Whatever the kill interrupted (an allocate call,
// startContainers in flight, the wait for the rendezvous) was cut short by
// the kill and is no failure of the job: the loop steps KillRequested
// before anything such a call returned, and the machine ignores every
// later event. The job ends KILLED; Reason, optional, says what the AM was
// doing. LaterAttempt says the job allows YARN another AM attempt
// (--am-attempts above this attempt's number): the finish then hands the
// application over (Finish.HandOver).
type KillRequested struct {
	Reason       string
	LaterAttempt bool
}

// KilledDiagnostics starts the diagnostics of a job ended by KillRequested.
const KilledDiagnostics = "killed: the ApplicationMaster was stopped (YARN kill or SIGTERM)"

// ShutdownRequested: the ResourceManager answered allocate with
// AM_SHUTDOWN (it no longer knows this attempt, or is ending the
// application itself). The AM process itself is not being stopped. The job
// ends KILLED.
type ShutdownRequested struct {
	Reason string
}

// RMFailed: the loop gave up on the ResourceManager (allocate kept failing,
// the AMRMToken was rejected). The job ends FAILED.
type RMFailed struct {
	Reason string
}

func (Registered) isEvent()         {}
func (Resynced) isEvent()           {}
func (NodeRacks) isEvent()          {}
func (Allocated) isEvent()          {}
func (ContainerStarted) isEvent()   {}
func (StartFailed) isEvent()        {}
func (ContainerCompleted) isEvent() {}
func (TaskRegistered) isEvent()     {}
func (Tick) isEvent()               {}
func (KillRequested) isEvent()      {}
func (ShutdownRequested) isEvent()  {}
func (RMFailed) isEvent()           {}

// YARN's special container exit statuses (Hadoop's ContainerExitStatus),
// under the names the core decides with; containerexit.Describe words them.
const (
	ExitSuccess                    = containerexit.Success
	ExitInvalid                    = containerexit.Invalid
	ExitAborted                    = containerexit.Aborted
	ExitDisksFailed                = containerexit.DisksFailed
	ExitPreempted                  = containerexit.Preempted
	ExitKilledExceededVMem         = containerexit.KilledExceededVMem
	ExitKilledExceededPMem         = containerexit.KilledExceededPMem
	ExitKilledByAppMaster          = containerexit.KilledByAppMaster
	ExitKilledByResourceManager    = containerexit.KilledByResourceManager
	ExitKilledAfterAppCompletion   = containerexit.KilledAfterAppCompletion
	ExitKilledByContainerScheduler = containerexit.KilledByContainerScheduler
)

// IsInfrastructureExit reports whether a container ended for reasons that
// are not the task's fault (lost or decommissioned node, bad disks,
// preemption, a kill by the RM or the NM's container scheduler): the ends
// that restart without counting toward RestartPolicy.Max.
func IsInfrastructureExit(status int32) bool {
	switch status {
	case ExitAborted, ExitDisksFailed, ExitPreempted, ExitKilledByResourceManager, ExitKilledByContainerScheduler:
		return true
	}
	return false
}

// firstLine keeps diagnostics one line and short: YARN's often carry a
// stack trace or the whole process tree.
func firstLine(s string) string {
	const maxLen = 300
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if len(line) > maxLen {
				line = strings.ToValidUTF8(line[:maxLen], "") + "…"
			}
			return line
		}
	}
	return ""
}
