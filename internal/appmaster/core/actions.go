package core

import (
	"fmt"
	"sort"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Ready is what the machine wants done, accumulated over the Steps since
// the last call to Machine.Ready. The loop performs it in this order:
//
//  0. Restart: the cluster starts again; start a new rendezvous generation
//     (forget the registrations and the published cluster spec) before
//     any launch.
//  1. Adoption: a previous attempt's tasks taken over (adopt.go): tell the
//     launchers' channel which container runs each; start nothing there.
//  2. Launch: startContainers on each container's NM (the outcome comes back
//     as ContainerStarted or StartFailed); then Warn: pass each warning (a
//     preemption: preemption.go; idle GPUs: gpuidle.go) to its task's
//     launcher.
//  3. Stop: graceful ones through the task's launcher, hard ones with
//     stopContainers, best effort (the outcome comes back as
//     ContainerCompleted, or not at all once the job has finished).
//  4. Asks and Release go out with the next allocate call, exactly once:
//     an Ask is an absolute count, so resending one later, after containers
//     have arrived, over-allocates (YARN-1902). If that allocate call fails,
//     send them with the next one; AskBuffer does this bookkeeping.
//  5. Finish, last: unregister with its status and diagnostics, then exit.
//     No Ready after the one carrying Finish has anything in it.
type Ready struct {
	Restart  *Restart
	Adoption *Adoption
	Asks     []Ask
	Release  []string // container ids
	Launch   []Launch
	Warn     []Warning
	Stop     []Stop
	Finish   *Finish
	// Notes are lines for the ApplicationMaster's log about a decision
	// that changes no container: an elastic job going on without a worker
	// still waiting for one (elastic_alloc.go). Any time, in any order.
	Notes []string
	// Exclude are nodes newly excluded (badnodes.go): the next allocate
	// call adds them to the application's blacklist, before its asks.
	Exclude []ExcludedNode
}

// Empty reports whether there is nothing to do.
func (r Ready) Empty() bool {
	return r.Restart == nil && r.Adoption == nil && len(r.Asks) == 0 && len(r.Release) == 0 && len(r.Launch) == 0 && len(r.Warn) == 0 && len(r.Stop) == 0 && r.Finish == nil && len(r.Notes) == 0 && len(r.Exclude) == 0
}

// Ask is one ResourceRequest: the absolute number of containers still
// wanted for a task group. Each group has its own allocation_request_id and
// priority, so container shapes never mix. Resource name is "*" (any
// node) with relaxed locality, except for an in-place replacement's ask:
// Node names the one node it must run on (relaxed locality off), under an
// allocation_request_id of its own.
type Ask struct {
	TaskType            taskspec.TaskType
	AllocationRequestID int64
	Priority            int32
	Resource            taskspec.Resources
	NodeLabel           string // node_label_expression; empty for none
	Node                string // the only host to run on; empty for any
	// Rack is Node's rack as the RM reported it (NodeRacks) when the
	// replacement was placed; empty when the machine had not heard.
	Rack  string
	Count int
	// SpreadTag, when set, makes the ask one SchedulingRequest instead of
	// ResourceRequests (--spread, taskspec's spread.go): its containers
	// carry the allocation tag SpreadTag, and the RM places none on a node
	// that already holds a container of this application tagged so (a
	// NODE-scope anti-affinity constraint). Partition is the node
	// partition its constraint names: NodeLabel, or the queue's default
	// label for an ask that names none (a SchedulingRequest gets no
	// default from the RM); "" for nodes without a label.
	SpreadTag string
	Partition string
	// AffinityTag, when set, also makes the ask a SchedulingRequest, its
	// containers carrying this tag (taskspec.AffinityTag): another type is
	// placed by them (--colocate, --apart). Affinity, when its Type is
	// set, is the ask's constraint instead of the spread's: NODE-scope
	// `in` (or `notin` when Apart) on the tag of Affinity.Other.
	AffinityTag string
	Affinity    taskspec.Affinity
}

// Scheduling reports whether the ask goes as a SchedulingRequest.
func (a Ask) Scheduling() bool {
	return a.SpreadTag != "" || a.AffinityTag != "" || a.Affinity.Type != ""
}

// DefaultRack is the rack YARN gives a node without topology information
// (Hadoop's NetworkTopology.DEFAULT_RACK).
const DefaultRack = "/default-rack"

// Locality is one resource name an Ask's ResourceRequests go under, and
// whether the scheduler may look past it.
type Locality struct {
	Name  string
	Relax bool
}

// Localities are the resource names of a's ResourceRequests: "*" with
// relaxed locality for any node; for an in-place replacement (Node) the
// node with relaxed locality, its rack and "*" with it off, YARN's way of
// saying "this node only" (Hadoop's AMRMClient sends the same three). The
// rack request cannot be left out: YARN's schedulers
// (LocalityAppPlacementAllocator.canAllocate) place a node-local container
// only while a request for the node's own rack is outstanding. So the rack
// must be the one the RM gives the node: Rack when the RM said, else
// DefaultRack, which is every node's on a cluster without a topology
// script. Should that guess be wrong (a node the AM heard nothing of, on a
// cluster with topology), no container comes and the machine restarts the
// cluster after taskspec.InPlaceWait, as when the node is full.
func (a Ask) Localities() []Locality {
	if a.Node == "" {
		return []Locality{{Name: "*", Relax: true}}
	}
	rack := a.Rack
	if rack == "" {
		rack = DefaultRack
	}
	return []Locality{{Name: a.Node, Relax: true}, {Name: rack}, {Name: "*"}}
}

// Launch: start the task's process in the container.
type Launch struct {
	Task    taskspec.TaskID
	Attempt int // 0 for a task's first container, then one more per restart
	// Restart is how many times the cluster restarted before this launch
	// (TFYARN_RESTART), Port the port the task must re-take (an in-place
	// replacement keeps its address), 0 for any.
	Restart   int
	Port      int
	Container Container
}

// Stop: stop a live container; Reason is for the log. A graceful stop
// (Hard false) asks the task's launcher to end its program (SIGTERM, then
// SIGKILL after the launcher's grace), so the program can flush and the
// driver learns its exit at once; the machine follows it with a hard stop
// if the task is still live Config.ContainerStopGrace later. A hard stop ends the
// container itself (the NodeManager's stopContainers; locally, cancelling
// the launcher).
type Stop struct {
	Task      taskspec.TaskID
	Container Container
	Reason    string
	Hard      bool
}

// String is the stop as logs and transcripts show it: "stop ps:0
// graceful: no longer needed".
func (s Stop) String() string {
	how := "graceful"
	if s.Hard {
		how = "hard"
	}
	return fmt.Sprintf("stop %s %s: %s", s.Task, how, s.Reason)
}

// FinalStatus is how the application ends, as unregister reports it.
type FinalStatus int

const (
	Succeeded FinalStatus = iota + 1
	Failed
	Killed
)

func (s FinalStatus) String() string {
	switch s {
	case Succeeded:
		return "SUCCEEDED"
	case Failed:
		return "FAILED"
	case Killed:
		return "KILLED"
	}
	return "UNDEFINED"
}

// Finish: unregister from the RM with this status and diagnostics.
type Finish struct {
	Status      FinalStatus
	Diagnostics string
	// HandOver: the AM was stopped from outside (KillRequested) while the job allows YARN
	// another attempt. A SIGTERM is all an AM hears of a preemption of its container or its
	// NodeManager shutting down as well as of a user's kill: for the first two YARN starts the
	// next attempt, which adopts the tasks still running and needs the application registered
	// and its staging directory (the job file, the saved task table). So the AM stops no task,
	// neither unregisters nor removes the staging directory; after a user's kill YARN ends the
	// application and its containers itself, and `tfyarn clean-staging` removes what is left.
	HandOver bool
}

// String is the finish as logs and transcripts show it: "finish
// SUCCEEDED: chief:0 succeeded".
func (f Finish) String() string {
	if f.HandOver {
		return fmt.Sprintf("finish %s, handed over to the next attempt: %s", f.Status, f.Diagnostics)
	}
	return fmt.Sprintf("finish %s: %s", f.Status, f.Diagnostics)
}

// AskBuffer holds ask changes and releases until an allocate call has
// carried them to the RM. A later Ask for the same group replaces an unsent
// one: only the newest absolute count is true.
type AskBuffer struct {
	asks    map[int64]Ask
	release []string
}

// Add queues a Ready's asks and releases.
func (b *AskBuffer) Add(r Ready) {
	if b.asks == nil {
		b.asks = map[int64]Ask{}
	}
	for _, a := range r.Asks {
		b.asks[a.AllocationRequestID] = a
	}
	b.release = append(b.release, r.Release...)
}

// Pending returns what the next allocate call should carry, asks ordered by
// allocation_request_id.
func (b *AskBuffer) Pending() (asks []Ask, release []string) {
	for _, a := range b.asks {
		asks = append(asks, a)
	}
	sort.Slice(asks, func(i, j int) bool { return asks[i].AllocationRequestID < asks[j].AllocationRequestID })
	return asks, append([]string(nil), b.release...)
}

// Sent forgets what Pending returned, once an allocate call carrying it has
// succeeded. Asks added since Pending was called are kept.
func (b *AskBuffer) Sent(asks []Ask, release []string) {
	for _, a := range asks {
		if cur, ok := b.asks[a.AllocationRequestID]; ok && cur == a {
			delete(b.asks, a.AllocationRequestID)
		}
	}
	sent := map[string]bool{}
	for _, id := range release {
		sent[id] = true
	}
	kept := b.release[:0]
	for _, id := range b.release {
		if !sent[id] {
			kept = append(kept, id)
		}
	}
	b.release = kept
}
