package appmaster

import (
	"net/http"

	"github.com/tfyarn/tfyarn/internal/contract"
)

// publicReport is the job's report as the web UI shows it to everyone but
// its owner (docs/security.md): the states, counts, times, progress, exit
// codes and resource samples, without the command line, the diagnostics
// and restart causes (stderr tails), the waiting lines, the tasks'
// addresses, containers, nodes, log links and failures, or TensorBoard's
// address. It copies what it keeps, field by field, so a field added to
// the report later stays the owner's until it is added here.
func publicReport(rep contract.StatusReport) contract.StatusReport {
	pub := contract.StatusReport{
		AppID: rep.AppID, Final: rep.Final, FinalStatus: rep.FinalStatus,
		Counts: rep.Counts, Restarts: rep.Restarts, User: rep.User,
		StartedAt: rep.StartedAt, EndedAt: rep.EndedAt, Progress: rep.Progress,
		Tasks: make([]contract.TaskReport, 0, len(rep.Tasks)),
	}
	if j := rep.Job; j != nil {
		pub.Job = &contract.JobInfo{Name: j.Name, Queue: j.Queue, NodeLabel: j.NodeLabel, Groups: j.Groups, Spread: j.Spread, Affinity: j.Affinity}
	}
	for _, t := range rep.Tasks {
		pub.Tasks = append(pub.Tasks, contract.TaskReport{
			Task: t.Task, Type: t.Type, Index: t.Index, State: t.State, Attempt: t.Attempt,
			ExitCode: t.ExitCode, Restarts: t.Restarts,
			RequestedAt: t.RequestedAt, StartedAt: t.StartedAt, EndedAt: t.EndedAt,
			GPUs: t.GPUs, GPUSampled: t.GPUSampled, Progress: t.Progress, ProgressAt: t.ProgressAt,
			ProcessSample: t.ProcessSample, ProcessSampled: t.ProcessSampled,
			MemoryLimitBytes: t.MemoryLimitBytes, NearMemoryLimit: t.NearMemoryLimit,
		})
	}
	return pub
}

// publicReport is the latest report's public view, for the web UI.
func (p *statusPage) publicReport() contract.StatusReport { return publicReport(p.currentReport()) }

// servePublicJSON serves the latest report's public view (GET only); it
// does not count as the owner's client watching.
func (p *statusPage) servePublicJSON(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return
	}
	writeJSON(w, p.publicReport())
}
