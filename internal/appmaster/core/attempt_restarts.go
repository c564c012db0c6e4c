package core

import (
	"fmt"

	"github.com/tfyarn/tfyarn/internal/containerexit"
	"github.com/tfyarn/tfyarn/internal/success"
	"github.com/tfyarn/tfyarn/taskspec"
)

// RestartRecord is the restarts a job has had, as one ApplicationMaster
// attempt hands it to the next (--am-attempts): without it a new attempt
// would start counting from zero, and --max-restarts would hold per
// attempt instead of per job.
type RestartRecord struct {
	Counted, Uncounted int      // restarts, by whether they count toward --max-restarts
	Cluster            int      // cluster restarts (the rendezvous generation, TFYARN_RESTART)
	Replaced           int      // lost workers replaced alone (an elastic job's; success.Elastic.MaxReplacements holds per job)
	Causes             []string // the diagnostics' "restart N after ..." and "replaced after ..." lines
	// NodeFailures and Excluded are the job's failed task attempts per
	// host and the nodes excluded (badnodes.go): they hold per job too.
	NodeFailures map[string]int
	Excluded     []ExcludedNode
}

// RestartRecord returns the machine's restarts so far, for the next attempt.
func (m *Machine) RestartRecord() RestartRecord {
	return RestartRecord{Counted: m.counted, Uncounted: m.uncounted, Cluster: m.generation, Replaced: m.replaced, Causes: append([]string(nil), m.causes...),
		NodeFailures: m.nodeFailureCounts(), Excluded: m.ExcludedNodes()}
}

// resumeRestarts takes over the restarts a previous attempt recorded
// (PreviousAttempt.Restarts), before any container.
func (m *Machine) resumeRestarts(r RestartRecord) {
	m.counted, m.uncounted, m.generation, m.replaced = max(r.Counted, 0), max(r.Uncounted, 0), max(r.Cluster, 0), max(r.Replaced, 0)
	m.causes = append([]string(nil), r.Causes...)
	m.resumeNodes(r)
}

// Unwatched is a task a previous attempt saved running in a container
// that was no longer running when this attempt registered: its program
// ended while no ApplicationMaster watched it. Why it ended comes later,
// as YARN hands the new attempt the previous attempt's finished
// containers.
type Unwatched struct {
	Task        taskspec.TaskID
	ContainerID string
	Host        string // where it registered
}

// unwatchedRestart is the restart attemptRestarted began while the ends of
// Unwatched tasks are not known yet.
type unwatchedRestart struct {
	attempt int                  // the previous attempt's number
	number  int                  // the restart's number in the diagnostics
	cause   int                  // its line in causes
	tasks   map[string]Unwatched // by container
	counted bool                 // a program's failure already made it count
}

// attemptRestarted records that this ApplicationMaster is a later attempt
// (YARN started it after the previous one died, --am-attempts) that
// adopted none of the previous attempt's tasks (PreviousAttempt), so every
// task starts afresh. That is a cluster restart, not counted toward
// --max-restarts while nothing shows it was the program's fault. unwatched
// are the cluster's tasks whose containers ended between the attempts:
// when YARN reports one of them ended by the program's failure (an exit
// code, or a kill that is not the cluster's doing), the restart was that
// failure's and counts like any other (ContainerCompleted of such a
// container): past --max-restarts, or for an exit code --retry-exit-codes
// leaves out, the job fails naming it. It runs before any container, after
// resumeRestarts.
// adopted are the tasks outside the cluster (evaluator, TensorBoard)
// adopted all the same: the cause names them.
func (m *Machine) attemptRestarted(attempt int, adopted []taskspec.TaskID, unwatched ...Unwatched) {
	m.uncounted++
	n := m.counted + m.uncounted
	what := "its tasks could not be adopted"
	if len(adopted) > 0 {
		what = fmt.Sprintf("its chief, worker and ps tasks could not be adopted (%s could)", success.JoinIDs(adopted))
	}
	m.causes = append(m.causes, fmt.Sprintf("restart %d after ApplicationMaster attempt %d ended and %s (not counted: not the program's fault)",
		n, attempt-1, what))
	m.generation++
	if len(unwatched) > 0 {
		r := &unwatchedRestart{attempt: attempt - 1, number: n, cause: len(m.causes) - 1, tasks: map[string]Unwatched{}}
		for _, u := range unwatched {
			r.tasks[u.ContainerID] = u
		}
		m.unwatched = r
	}
}

// unwatchedEnded judges the end of a container whose program ended while
// no ApplicationMaster watched it (attemptRestarted): ok is false when the
// container is not one of those.
func (m *Machine) unwatchedEnded(e ContainerCompleted) (ok bool) {
	r := m.unwatched
	if r == nil {
		return false
	}
	u, ok := r.tasks[e.ID]
	if !ok {
		return false
	}
	delete(r.tasks, e.ID)
	switch {
	case e.ExitStatus == ExitSuccess, e.ExitStatus == ExitKilledByAppMaster, e.ExitStatus == ExitKilledAfterAppCompletion:
		return true // no failure, or the previous attempt's own stop
	case IsInfrastructureExit(e.ExitStatus) && !m.restartPolicy.NoInfraRestarts:
		return true // the cluster's doing: rightly not counted
	}
	failure := fmt.Sprintf("%s (container %s on %s) failed while no ApplicationMaster watched it (attempt %d had ended): %s",
		u.Task, u.ContainerID, u.Host, r.attempt, containerexit.Describe(e.ExitStatus))
	if e.ExitStatus < 0 {
		if reason := ContainerDiagnostics(e.Diagnostics); reason != "" {
			failure += ": " + reason
		}
	}
	probe := []*TaskStatus{{Task: u.Task, ExitStatus: e.ExitStatus}}
	if !r.counted {
		// The restart becomes this failure's, counted: allowed only within
		// the budget left before it.
		if _, allowed := m.mayRestart(probe); !allowed {
			m.dropUnwatchedRestart()
			m.finish(Failed, failure)
			return true
		}
		r.counted = true
		m.uncounted--
		m.counted++
		m.causes[r.cause] = fmt.Sprintf("restart %d after %s", r.number, failure)
		return true
	}
	// Another failure of the same restart: its exit code must allow it.
	if e.ExitStatus > 0 && !m.restartPolicy.Retries(int(e.ExitStatus)) || e.ExitStatus < 0 && len(m.restartPolicy.RetryExitCodes) > 0 {
		m.finish(Failed, failure)
		return true
	}
	m.causes = append(m.causes, fmt.Sprintf("restart %d after %s", r.number, failure))
	return true
}

// dropUnwatchedRestart takes back the restart attemptRestarted recorded:
// the job fails instead, and its diagnostics say why.
func (m *Machine) dropUnwatchedRestart() {
	r := m.unwatched
	m.uncounted--
	m.causes = append(m.causes[:r.cause], m.causes[r.cause+1:]...)
	m.unwatched = nil
}
