package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/jobreport"
)

// Event is a change in the application's report that Wait observed.
type Event struct {
	Time        time.Time
	AppID       string
	State       string // YARN application state: NEW, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED
	FinalStatus string // UNDEFINED until the end, then SUCCEEDED, FAILED or KILLED
	TrackingURL string
	Diagnostics string
	// StateChanged and TrackingURLChanged say what is new; the first event
	// has StateChanged set.
	StateChanged, TrackingURLChanged bool

	// Task is set, and the fields above are not, for a task's change seen
	// on the AM's status page: TaskChange says which (TaskLaunched,
	// TaskRegistered, TaskEnded), Counts sums up all the tasks then.
	Task       *jobreport.Task
	TaskChange string
	Counts     *jobreport.Counts
	// Exit says, for TaskEnded, how the task's container ended, in words:
	// "exit code 137 (SIGKILL)", "preempted by the scheduler (exit status -102)",
	// and YARN's reason when the task failed with one (a launch the NodeManager
	// refused: "exit code 40: container-executor: docker image ...").
	Exit string
	// TensorBoardURL is, for TaskRegistered of a TensorBoard task, its address.
	TensorBoardURL string

	// Restart is set, and nothing else but Time and AppID, when the AM
	// restarted tasks: one line saying which restart and the failure
	// behind it, as the final diagnostics list it ("restart 1 after
	// worker:1 (container ... on ...) failed: exit code 7").
	Restart string

	// NearMemory is set, and nothing else but Time and AppID, once per
	// container whose program's peak RSS came near the container's memory
	// (jobreport.Task.NearMemoryLimit): one line naming the task, its
	// container, the peak and the limit, before YARN kills it.
	NearMemory string

	// Waiting is set, and nothing else but Time and AppID, when tasks wait
	// for a container: at once (after a few seconds), then every
	// waitingEvery while they still wait. One line: what is awaited,
	// where, what the cluster offers the queue there and, for GPUs, who
	// holds them; For says how long the wait has been seen.
	Waiting string
	For     time.Duration

	// Notice is set, and nothing else but Time and AppID, when the
	// ResourceManager or the ApplicationMaster stops answering or answers
	// again: one line for the user (the CLI prints it on stderr), e.g.
	// "ResourceManager at rm:8032 not answering (connection refused); retrying".
	Notice string
}

// Result is how an application ended.
type Result struct {
	AppID         string `json:"app_id"`
	FinalStatus   string `json:"final_status"`
	State         string `json:"state"`
	Diagnostics   string `json:"diagnostics"`
	TrackingURL   string `json:"tracking_url"`
	UploadedBytes int64  `json:"uploaded_bytes"`
	// Tasks is each task as the AM's status page last showed it; empty
	// when the page could not be reached.
	Tasks []jobreport.Task `json:"tasks,omitempty"`
	// AMAttempts is how many ApplicationMaster attempts YARN started (1
	// unless one died and Job.AMAttempts allowed another); 0 when no report
	// named one.
	AMAttempts int `json:"am_attempts,omitempty"`
	// Restarts is how many restarts the job had (Job.Restarts), as the
	// AM's status page last said; the diagnostics name the failure behind
	// each.
	Restarts int `json:"restarts"`
}

// Succeeded reports whether the job succeeded.
func (r *Result) Succeeded() bool { return r.FinalStatus == "SUCCEEDED" }

// silentPolls is how many report calls (or status page fetches) in a row
// may fail before Wait says that the RM (or the AM) is not answering.
const silentPolls = 2

// maxRMSilence is how long Wait keeps retrying an RM that does not answer
// before it gives up (the application goes on without it).
const maxRMSilence = 15 * time.Minute

// Wait polls the application's report until it ends, calling onEvent (if
// not nil) on every change of state or tracking URL, and returns how it
// ended; a job that did not succeed also returns a *JobError. When ctx ends
// first, Wait kills the application and returns its final report with
// ctx's error. Either way the staging directory is removed.
func (s *Submission) Wait(ctx context.Context, onEvent func(Event)) (*Result, error) {
	defer s.removeStaging()
	var last *hadoopyarn.ApplicationReportProto
	failures := 0
	var silentSince time.Time
	notice := func(text string) {
		if onEvent != nil {
			onEvent(Event{Time: time.Now(), AppID: s.AppID, Notice: text})
		}
	}
	status := newStatusWatcher(s.statusKey)
	status.notice = notice
	status.explain = func(line string) string { return s.explainWait(ctx, line) }
	defer status.close()
	s.status = status
	s.attempts = &attemptWatcher{}
	t := time.NewTicker(s.conn.PollInterval)
	defer t.Stop()
	for {
		cctx, cancel := s.call(ctx)
		r, err := s.rm.GetApplicationReport(cctx, s.id)
		cancel()
		switch {
		case ctx.Err() != nil:
			return s.killed(ctx.Err(), onEvent, last)
		case err != nil:
			if failures++; failures == 1 {
				silentSince = time.Now()
			}
			if failures == silentPolls {
				notice(fmt.Sprintf("ResourceManager at %s not answering (%s); retrying", rmAddr(s.rm, err), shortCause(err)))
			}
			if time.Since(silentSince) > maxRMSilence {
				return s.result(last), fmt.Errorf("client: watching %s: no answer for %s: %w", s.AppID, maxRMSilence, err)
			}
		default:
			if failures >= silentPolls {
				notice(fmt.Sprintf("ResourceManager at %s answering again after %s", rmAddr(s.rm, nil), time.Since(silentSince).Round(time.Second)))
			}
			failures = 0
			if n := s.attempts.observe(r, func(prev int32) string { return s.attemptDiagnostics(ctx, prev) }); n != "" {
				notice(n)
				// A new AM: its task table starts over.
				status.last = nil
			}
			status.locate(r)
			// Task changes first, so the tasks' ends come before the
			// application's. The AM lingers a moment after unregistering
			// for a watcher to read the final task table.
			status.poll(ctx, s.AppID, onEvent)
			emit(onEvent, last, r)
			last = r
			if yarn.IsTerminal(r.GetYarnApplicationState()) {
				s.keepHistory(ctx)
				return s.finished(r)
			}
		}
		select {
		case <-ctx.Done():
			return s.killed(ctx.Err(), onEvent, last)
		case <-t.C:
		}
	}
}

// Kill asks the RM to kill the application and waits until it ended.
func (s *Submission) Kill(ctx context.Context, reason string) (*Result, error) {
	r, err := s.rm.KillApplication(ctx, s.id, reason)
	if err != nil {
		return s.result(r), fmt.Errorf("client: killing %s: %w", s.AppID, err)
	}
	return s.result(r), nil
}

func (s *Submission) killed(cause error, onEvent func(Event), last *hadoopyarn.ApplicationReportProto) (*Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.conn.CallTimeout)
	defer cancel()
	res, err := s.Kill(ctx, "killed by "+s.job.user+": tfyarn was interrupted")
	if err != nil {
		return res, fmt.Errorf("%w (and %w)", cause, err)
	}
	if r := s.lastReport(ctx); r != nil {
		emit(onEvent, last, r)
	}
	return res, fmt.Errorf("client: waiting for %s: %w", s.AppID, cause)
}

func (s *Submission) lastReport(ctx context.Context) *hadoopyarn.ApplicationReportProto {
	r, err := s.rm.GetApplicationReport(ctx, s.id)
	if err != nil {
		return nil
	}
	return r
}

func (s *Submission) finished(r *hadoopyarn.ApplicationReportProto) (*Result, error) {
	res := s.result(r)
	if !res.Succeeded() {
		return res, &JobError{Result: res}
	}
	return res, nil
}

func (s *Submission) result(r *hadoopyarn.ApplicationReportProto) *Result {
	res := &Result{AppID: s.AppID, UploadedBytes: s.UploadedBytes}
	if r != nil {
		res.State = yarn.AppStateName(r.GetYarnApplicationState())
		res.FinalStatus = yarn.FinalStatusName(r.GetFinalApplicationStatus())
		res.Diagnostics = r.GetDiagnostics()
		res.TrackingURL = r.GetTrackingUrl()
	}
	if s.status != nil {
		res.Tasks = s.status.tasks()
		if s.status.last != nil {
			res.Restarts = s.status.last.Restarts
		}
	}
	if s.attempts != nil {
		res.AMAttempts = int(s.attempts.current)
	}
	return res
}

func emit(onEvent func(Event), prev, cur *hadoopyarn.ApplicationReportProto) {
	if onEvent == nil {
		return
	}
	ev := Event{
		Time:        time.Now(),
		AppID:       yarn.FormatApplicationID(cur.GetApplicationId()),
		State:       yarn.AppStateName(cur.GetYarnApplicationState()),
		FinalStatus: yarn.FinalStatusName(cur.GetFinalApplicationStatus()),
		TrackingURL: cur.GetTrackingUrl(),
		Diagnostics: cur.GetDiagnostics(),
	}
	ev.StateChanged = prev == nil || prev.GetYarnApplicationState() != cur.GetYarnApplicationState()
	ev.TrackingURLChanged = prev != nil && prev.GetTrackingUrl() != cur.GetTrackingUrl() && cur.GetTrackingUrl() != ""
	if ev.StateChanged || ev.TrackingURLChanged {
		onEvent(ev)
	}
}

// RunOnYarn submits the job to the cluster conn names, waits for it to end
// and cleans up: everything `tfyarn run` does. A job that ran but did not
// succeed returns its Result and a *JobError.
func RunOnYarn(ctx context.Context, conn Connection, job Job) (*Result, error) {
	c, err := Connect(conn)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	s, err := c.Submit(ctx, job, Callbacks{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Wait(ctx, nil)
}

// rmAddr is the RM address err names, else the configured ones.
func rmAddr(rm *yarn.ApplicationClient, err error) string {
	var rme *yarn.RMError
	if errors.As(err, &rme) && rme.Addr != "" {
		return rme.Addr
	}
	return strings.Join(rm.Addrs(), ", ")
}

// shortCause is why a call failed, in a few words: the socket error
// ("connection refused"), "no answer within ..." or the RM's reason.
func shortCause(err error) string {
	var errno syscall.Errno
	var rme *yarn.RMError
	switch {
	case errors.As(err, &errno):
		return errno.Error()
	case yarn.IsTimeout(err):
		return "no answer in time"
	case errors.As(err, &rme):
		return rme.Reason()
	}
	return err.Error()
}
