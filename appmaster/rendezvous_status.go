package appmaster

import (
	"encoding/json"
	"fmt"
	"github.com/tfyarn/tfyarn/appmaster/core"
	"net/http"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

// NewStatusReport describes a snapshot of the job as the client reads it.
func NewStatusReport(appID string, s Snapshot) contract.StatusReport {
	r := contract.StatusReport{AppID: appID, Tasks: make([]contract.TaskReport, 0, len(s.Tasks))}
	if s.Finish != nil {
		r.Final, r.FinalStatus, r.Diagnostics = true, s.Finish.Status.String(), s.Finish.Diagnostics
	}
	for _, t := range s.Tasks {
		tr := contract.TaskReport{
			Task: t.Task.String(), Type: string(t.Task.Type), Index: t.Task.Index,
			State: t.State.String(), Attempt: t.Attempt,
			Host: t.Host, Port: t.Port,
			ContainerID: t.Container.ID, Node: t.Container.NodeID,
			Failure: t.Failure,
		}
		r.Counts.Total++
		if t.State != core.TaskPending {
			r.Counts.Allocated++
		}
		if t.Host != "" {
			r.Counts.Registered++
		}
		if t.State == core.TaskRunning {
			r.Counts.Running++
		}
		if t.State.Ended() {
			r.Counts.Ended++
			code := t.ExitStatus
			tr.ExitCode = &code
		}
		r.Tasks = append(r.Tasks, tr)
	}
	return r
}

// statusPage serves the latest snapshot.
type statusPage struct {
	mu           sync.Mutex
	appID        string
	report       contract.StatusReport
	watched      bool          // someone fetched the JSON page
	finalFetched chan struct{} // closed once the final report was served
	fetchedOnce  sync.Once
}

func (p *statusPage) init(appID string, job taskspec.Job) {
	p.appID = appID
	p.finalFetched = make(chan struct{})
	groups := append([]taskspec.TaskGroup(nil), job.Tasks...)
	taskspec.SortGroups(groups)
	var tasks []core.TaskStatus
	for _, g := range groups {
		for _, id := range g.TaskIDs() {
			tasks = append(tasks, core.TaskStatus{Task: id})
		}
	}
	p.report = NewStatusReport(appID, Snapshot{Tasks: tasks})
}

func (p *statusPage) update(s Snapshot) {
	r := NewStatusReport(p.appID, s)
	p.mu.Lock()
	p.report = r
	p.mu.Unlock()
}

func (p *statusPage) current() (contract.StatusReport, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.report, p.watched
}

func (p *statusPage) serveJSON(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return
	}
	p.mu.Lock()
	p.watched = true
	rep := p.report
	p.mu.Unlock()
	body, err := json.Marshal(rep)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if _, err := w.Write(append(body, '\n')); err == nil && rep.Final {
		p.fetchedOnce.Do(func() { close(p.finalFetched) })
	}
}

// serveText is the tracking URL's page: the same, for people.
func (p *statusPage) serveText(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	rep, _ := p.current()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, "%s: %d tasks, %d allocated, %d registered, %d running, %d ended\n",
		rep.AppID, rep.Counts.Total, rep.Counts.Allocated, rep.Counts.Registered, rep.Counts.Running, rep.Counts.Ended)
	if rep.Final {
		fmt.Fprintf(w, "%s: %s\n", rep.FinalStatus, rep.Diagnostics)
	}
	fmt.Fprintf(w, "\n%-14s %-10s %-24s %-40s %s\n", "TASK", "STATE", "ADDRESS", "CONTAINER", "EXIT")
	for _, t := range rep.Tasks {
		addr, exit := "-", "-"
		if t.Host != "" {
			addr = fmt.Sprintf("%s:%d", t.Host, t.Port)
		}
		if t.ExitCode != nil {
			exit = fmt.Sprint(*t.ExitCode)
		}
		fmt.Fprintf(w, "%-14s %-10s %-24s %-40s %s\n", t.Task, t.State, addr, orDefault(t.ContainerID, "-"), exit)
	}
	fmt.Fprintf(w, "\nJSON: %s\n", contract.StatusPath)
}

// awaitFinalFetch waits, at most linger, for a client that has been
// watching to fetch the final report.
func (p *statusPage) awaitFinalFetch(linger time.Duration) {
	rep, watched := p.current()
	if !watched || !rep.Final || linger <= 0 {
		return
	}
	t := time.NewTimer(linger)
	defer t.Stop()
	select {
	case <-p.finalFetched:
	case <-t.C:
	}
}
