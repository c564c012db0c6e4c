package appmaster

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/tfyarn/tfyarn/internal/buildinfo"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// NewStatusReport describes a snapshot of the job as the client reads it.
func NewStatusReport(appID string, s Snapshot) contract.StatusReport {
	r := contract.StatusReport{AppID: appID, Tasks: make([]contract.TaskReport, 0, len(s.Tasks)), Restarts: s.Restarts, RestartCauses: s.Record.Causes, Waiting: s.Waiting}
	if s.Finish != nil {
		r.Final, r.FinalStatus, r.Diagnostics = true, s.Finish.Status.String(), s.Finish.Diagnostics
	}
	if s.GPUIdle != "" {
		r.Warnings = append(r.Warnings, s.GPUIdle)
	}
	for _, x := range s.Record.Excluded {
		r.ExcludedNodes = append(r.ExcludedNodes, contract.ExcludedNode{Host: x.Host, Reason: x.Reason})
	}
	for _, t := range s.Tasks {
		tr := contract.TaskReport{
			Task: t.Task.String(), Type: string(t.Task.Type), Index: t.Task.Index,
			State: t.State.String(), Attempt: t.Attempt, Restarts: t.Attempt,
			Host: t.Host, Port: t.Port,
			ContainerID: t.Container.ID, Node: t.Container.NodeID,
			Failure:     t.Failure,
			NodeHTTP:    t.Container.NodeHTTPAddress,
			RequestedAt: timeOrNil(t.RequestedAt), StartedAt: timeOrNil(t.StartedAt), EndedAt: timeOrNil(t.EndedAt),
			MemoryLimitBytes: t.Container.Resource.MemoryMiB << 20,
			Attempts:         taskAttempts(t),
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

// taskAttempts are t's ended attempts and its current one, for the report.
func taskAttempts(t core.TaskStatus) []contract.TaskAttempt {
	var out []contract.TaskAttempt
	for _, a := range t.Earlier {
		out = append(out, contract.TaskAttempt{Attempt: a.Attempt, ContainerID: a.ContainerID, Node: a.Node, MemoryMiB: a.MemoryMiB, Failure: a.Failure})
	}
	if t.Container.ID != "" && t.State != core.TaskPending {
		out = append(out, contract.TaskAttempt{Attempt: t.Attempt, ContainerID: t.Container.ID, Node: t.Container.NodeID, MemoryMiB: t.Container.Resource.MemoryMiB, Failure: t.Failure})
	}
	return out
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// JobInfo describes job for the web UI and the history record.
func JobInfo(job taskspec.Job) *contract.JobInfo {
	info := &contract.JobInfo{Name: job.Name, Queue: job.Queue, NodeLabel: job.NodeLabel, Spread: job.SpreadText(), Affinity: job.AffinityText()}
	argv := append([]string{job.Command}, job.Args...)
	if job.Script != "" {
		argv = append([]string{"python", job.Script}, job.Args...)
	}
	info.Command = ShellJoin(argv)
	groups := append([]taskspec.TaskGroup(nil), job.Tasks...)
	taskspec.SortGroups(groups)
	for _, g := range groups {
		info.Groups = append(info.Groups, contract.GroupInfo{Type: string(g.Type), Spec: g.Spec(), NodeLabel: g.NodeLabel})
	}
	return info
}

// gpuEntry is a launcher's last GPU sample for one container.
type gpuEntry struct {
	containerID string
	gpus        []contract.GPUSample
	at          time.Time
}

// progressEntry is a program's last reported progress in one container.
type progressEntry struct {
	containerID string
	progress    contract.Progress
	at          time.Time
}

// processEntry is a launcher's last sample of its program for one
// container.
type processEntry struct {
	containerID string
	sample      contract.ProcessSample
	at          time.Time
}

// statusPage serves the latest snapshot.
type statusPage struct {
	mu        sync.Mutex
	appID     string
	user      string
	job       *contract.JobInfo
	startedAt time.Time
	endedAt   time.Time
	gpus      map[taskspec.TaskID]gpuEntry
	// gpuSeconds is the report's GPUSecondsUsed (gpuSecondsSince).
	gpuSeconds float64
	progress   map[taskspec.TaskID]progressEntry
	hasChief   bool
	// jobWho and jobPoints are whose progress is the job's and its
	// history (core.AddProgressPoint); jobFraction the latest, for YARN.
	jobWho       string
	jobPoints    []core.ProgressPoint
	jobFraction  float64
	jobKnown     bool
	jobAt        time.Time
	jobLast      core.TaskProgress
	stale        bool // a progress report or process sample came since the report was built
	procs        map[taskspec.TaskID]processEntry
	results      map[taskspec.TaskID]resultEntry // saved or refused results, whatever the container
	last         Snapshot
	report       contract.StatusReport
	watched      bool          // someone fetched the JSON page
	finalFetched chan struct{} // closed once the final report was served
	ended        chan struct{} // closed when the report turns final (update)
	lingering    chan struct{} // closed when awaitFinalFetch starts waiting (tests wait for it)
	fetchedOnce  sync.Once
}

func (p *statusPage) init(appID, user string, job taskspec.Job) {
	p.appID, p.user, p.job = appID, user, JobInfo(job)
	p.startedAt = time.Now().UTC()
	p.gpus = map[taskspec.TaskID]gpuEntry{}
	p.progress = map[taskspec.TaskID]progressEntry{}
	for _, g := range job.Tasks {
		p.hasChief = p.hasChief || g.Type == taskspec.Chief
	}
	p.procs = map[taskspec.TaskID]processEntry{}
	p.results = map[taskspec.TaskID]resultEntry{}
	p.finalFetched = make(chan struct{})
	p.ended = make(chan struct{})
	p.lingering = make(chan struct{})
	groups := append([]taskspec.TaskGroup(nil), job.Tasks...)
	taskspec.SortGroups(groups)
	var tasks []core.TaskStatus
	for _, g := range groups {
		for _, id := range g.TaskIDs() {
			tasks = append(tasks, core.TaskStatus{Task: id})
		}
	}
	p.last = Snapshot{Tasks: tasks}
	p.report, p.stale = p.build(), false
}

func (p *statusPage) update(s Snapshot) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.Finish != nil && p.endedAt.IsZero() {
		p.endedAt = time.Now().UTC()
		close(p.ended)
	}
	p.last = s
	p.report, p.stale = p.build(), false
}

// setGPUs records a launcher's GPU sample; a sample from a container the
// task no longer runs in is dropped when the report is built.
func (p *statusPage) setGPUs(task taskspec.TaskID, containerID string, gpus []contract.GPUSample, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, ok := p.gpus[task]; ok && prev.containerID == containerID {
		p.gpuSeconds += gpuSecondsSince(gpus, at.Sub(prev.at))
	}
	p.gpus[task] = gpuEntry{containerID: containerID, gpus: gpus, at: at.UTC()}
	p.report, p.stale = p.build(), false
}

// maxGPUSampleGap bounds the time one GPU sample stands for: a launcher
// samples every 10 s, and a gap (a slow nvidia-smi, a lost report) is not
// taken to have been busy throughout.
const maxGPUSampleGap = time.Minute

// gpuSecondsSince is what a sample adds to the GPU-seconds used: each
// GPU's utilisation times the time since the task's previous sample.
func gpuSecondsSince(gpus []contract.GPUSample, since time.Duration) float64 {
	since = min(max(since, 0), maxGPUSampleGap)
	used := 0.0
	for _, g := range gpus {
		used += float64(g.UtilizationPct) / 100 * since.Seconds()
	}
	return used
}

// setProgress records a program's progress; like GPUs, one from a
// container the task no longer runs in is dropped when the report is built.
func (p *statusPage) setProgress(task taskspec.TaskID, containerID string, progress contract.Progress, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.progress[task] = progressEntry{containerID: containerID, progress: progress, at: at.UTC()}
	// The report is rebuilt when read: every task may report every second,
	// and a rebuild took 0.45-0.87 ms at 200 tasks, against 13 µs for
	// trackJob (BenchmarkProgressReport200).
	p.trackJob()
	p.stale = true
}

// fresh rebuilds the report if a progress report or process sample came
// since. p.mu is held.
func (p *statusPage) fresh() {
	if p.stale {
		p.report, p.stale = p.build(), false
	}
}

// jobProgress is the job's progress as the programs report it, for YARN's
// application progress; false when none reported.
func (p *statusPage) jobProgress() (float64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.jobFraction, p.jobKnown // trackJob keeps it current
}

// trackJob follows the job's progress (core.JobProgress over the tasks'
// reports from their current containers) and its history: cheap, so every
// report is taken into the rate, not only those the page was built after.
// p.mu is held.
func (p *statusPage) trackJob() {
	reports := make([]core.TaskProgress, 0, len(p.progress))
	for _, t := range p.last.Tasks {
		if e, ok := p.progress[t.Task]; ok && e.containerID == t.Container.ID {
			reports = append(reports, core.TaskProgress{Task: t.Task, Fraction: e.progress.Fraction, Step: e.progress.Step, Total: e.progress.Total})
		}
	}
	tp, who, ok := core.JobProgress(p.hasChief, reports)
	if !ok {
		p.jobKnown = false
		return
	}
	if who != p.jobWho {
		p.jobWho, p.jobPoints = who, nil
	}
	p.jobAt = p.progress[tp.Task].at
	p.jobPoints = core.AddProgressPoint(p.jobPoints, core.ProgressPoint{At: p.jobAt, Fraction: tp.Fraction, Step: tp.Step, Total: tp.Total})
	p.jobFraction, p.jobKnown, p.jobLast = tp.Fraction, true, tp
}

// jobReport is the job's progress for the report, with its rate and time
// left as of now; nil when no program reported. p.mu is held.
func (p *statusPage) jobReport(now time.Time) *contract.JobProgress {
	if !p.jobKnown {
		return nil
	}
	tp := p.jobLast
	jp := &contract.JobProgress{Progress: contract.Progress{Fraction: tp.Fraction, Step: tp.Step, Total: tp.Total}, Task: p.jobWho, UpdatedAt: timeOrNil(p.jobAt)}
	rate := core.EstimateProgress(p.jobPoints, now)
	if rate.Known {
		jp.FractionPerSecond = roundedPtr(rate.FractionPerSecond, 6)
	}
	if rate.HasSteps {
		jp.StepsPerSecond = roundedPtr(rate.StepsPerSecond, 3)
	}
	if rate.HasETA {
		jp.ETASeconds = roundedPtr(rate.ETA.Seconds(), 0)
	}
	return jp
}

func roundedPtr(v float64, digits int) *float64 {
	scale := math.Pow(10, float64(digits))
	v = math.Round(v*scale) / scale
	return &v
}

// setProcess records a launcher's sample of its program, like setGPUs.
func (p *statusPage) setProcess(task taskspec.TaskID, containerID string, sample contract.ProcessSample, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.procs[task] = processEntry{containerID: containerID, sample: sample, at: at.UTC()}
	// Built when next read: at 200 tasks a build per sample cost 0.2 ms,
	// 200 of them per round (bench/results/task-metrics.md).
	p.stale = true
}

// build decorates the machine's view with what only the page knows: the
// job, the user (for the log links), times, GPUs, TensorBoard's URL. p.mu
// is held (or p not yet shared).
func (p *statusPage) build() contract.StatusReport {
	r := NewStatusReport(p.appID, p.last)
	r.User, r.Job = p.user, p.job
	r.GPUSecondsUsed = p.gpuSeconds
	r.TfyarnVersion = buildinfo.Current().Label()
	r.StartedAt, r.EndedAt = timeOrNil(p.startedAt), timeOrNil(p.endedAt)
	for i := range r.Tasks {
		t := &r.Tasks[i]
		t.LogsURL = contract.ContainerLogsURL(t.NodeHTTP, t.ContainerID, p.user)
		id := taskspec.TaskID{Type: taskspec.TaskType(t.Type), Index: t.Index}
		if g, ok := p.gpus[id]; ok && g.containerID == t.ContainerID {
			t.GPUs, t.GPUSampled = g.gpus, timeOrNil(g.at)
		}
		if e, ok := p.progress[id]; ok && e.containerID == t.ContainerID {
			pr := e.progress
			t.Progress, t.ProgressAt = &pr, timeOrNil(e.at)
		}
		if s, ok := p.procs[id]; ok && s.containerID == t.ContainerID {
			sample := s.sample
			t.ProcessSample, t.ProcessSampled = &sample, timeOrNil(s.at)
			t.NearMemoryLimit = core.NearMemoryLimit(sample.PeakRSSBytes, t.MemoryLimitBytes)
		}
		if e, ok := p.results[id]; ok {
			t.ResultBytes, t.ResultNotSaved = e.bytes, e.notSaved
		}
		if id.Type == taskspec.TensorBoard && t.Host != "" && t.State == core.TaskRunning.String() {
			r.TensorBoardURL = contract.TensorBoardURL(t.Host, t.Port)
		}
	}
	p.trackJob()
	r.Progress = p.jobReport(time.Now())
	return r
}

func (p *statusPage) current() (contract.StatusReport, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fresh()
	return p.report, p.watched
}

func (p *statusPage) serveJSON(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Query().Get(contract.StatusWaitParam) == contract.StatusWaitFinal {
		// The owner's client learns the job's end at once, not at its next
		// poll: the AM, lingering for that fetch, then exits sooner too.
		t := time.NewTimer(contract.StatusWaitMax)
		defer t.Stop()
		select {
		case <-p.ended:
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	p.mu.Lock()
	p.watched = true
	p.fresh()
	rep := p.report
	p.mu.Unlock()
	if writeJSON(w, rep) && rep.Final {
		p.fetchedOnce.Do(func() { close(p.finalFetched) })
	}
}

// writeJSON answers with rep in JSON; false if it could not.
func writeJSON(w http.ResponseWriter, rep contract.StatusReport) bool {
	body, err := json.Marshal(rep)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, err = w.Write(append(body, '\n'))
	return err == nil
}

// report is the latest report, for the web UI.
func (p *statusPage) currentReport() contract.StatusReport {
	rep, _ := p.current()
	return rep
}

// awaitFinalFetch waits, at most linger, for a client that has been
// watching to fetch the final report.
func (p *statusPage) awaitFinalFetch(linger time.Duration) {
	rep, watched := p.current()
	if !watched || !rep.Final || linger <= 0 {
		return
	}
	t := time.NewTimer(linger)
	select {
	case <-p.lingering: // Close called again
	default:
		close(p.lingering)
	}
	defer t.Stop()
	select {
	case <-p.finalFetched:
	case <-t.C:
	}
}

// metricsBoard is the job's rendezvous.Board that also takes the
// launchers' metrics (rendezvous.MetricsHandler) for the status page.
type metricsBoard struct {
	*rendezvous.Board
	page    *statusPage  // set before the server serves
	results *resultSpool // nil: no results kept
	// gpus, if set, takes each GPU sample for the machine (set with page).
	gpus func(core.GPUsSampled)
}

// ReportMetrics implements rendezvous.MetricsHandler.
func (b *metricsBoard) ReportMetrics(_ context.Context, m rendezvous.MetricsReport) error {
	if !b.page.knows(m.Task) {
		return fmt.Errorf("%w: %s", rendezvous.ErrUnknownTask, m.Task)
	}
	// A report carries what its sender had: the launcher sends progress
	// alone (GPUs nil), more often than its samples, and its program's CPU
	// and memory alone.
	if m.Process != nil {
		b.page.setProcess(m.Task, m.ContainerID, *m.Process, time.Now())
	}
	if m.Progress != nil {
		b.page.setProgress(m.Task, m.ContainerID, *m.Progress, time.Now())
	}
	if m.Progress == nil && m.Process == nil || m.GPUs != nil {
		b.page.setGPUs(m.Task, m.ContainerID, m.GPUs, time.Now())
		if b.gpus != nil && len(m.GPUs) > 0 {
			s := core.GPUsSampled{Task: m.Task, ContainerID: m.ContainerID}
			for _, g := range m.GPUs {
				s.Utilization = append(s.Utilization, float64(g.UtilizationPct))
			}
			b.gpus(s)
		}
	}
	return nil
}

func (p *statusPage) knows(task taskspec.TaskID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.last.Tasks {
		if t.Task == task {
			return true
		}
	}
	return false
}

// FinalReport is the status report as it stands, for the job's history
// once the job is decided.
func (r *TaskRendezvous) FinalReport() contract.StatusReport { return r.page.currentReport() }

// JobProgress is the job's progress as its programs report it
// (core.JobProgress), for YARN's application progress; false when no
// program reported any.
func (r *TaskRendezvous) JobProgress() (float64, bool) { return r.page.jobProgress() }
