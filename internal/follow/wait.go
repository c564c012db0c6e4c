// Package follow follows a submitted application until it ends, as
// client.Submission.Wait does: the ResourceManager's report (states,
// tracking URL, AM attempts, an RM that stops answering), the AM's status
// page (tasks launched, registered and ended, restarts, tasks waiting for
// containers and who holds the GPUs they wait for, programs near their
// memory limit), the kill when the caller gives up, the history record the
// AM could not write itself. It also reads a running job's live report
// (Live, StatusOf) for client.Client.Status and Logs.
package follow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/jobreport"
)

// Event and Result are the public report types of following a job (their one
// definition, in jobreport), named here as the engine uses them.
type (
	Event  = jobreport.Event
	Result = jobreport.Result
)

// App is the submitted application Wait follows.
type App struct {
	AppID string
	ID    *hadoopyarn.ApplicationIdProto
	User  string // who submitted it
	RM    *yarn.ApplicationClient
	FS    *hdfs.FS // where its staging directory and history are
	// StatusKey opens the AM's status page (contract.StatusKeyName).
	StatusKey     []byte
	UploadedBytes int64 // for Result
}

// Options bound the calls: CallTimeout each RM call, PollInterval how often
// Wait asks for the application's report.
type Options struct {
	CallTimeout  time.Duration
	PollInterval time.Duration
}

// Follower follows one application.
type Follower struct {
	App
	opts     Options
	status   *statusWatcher  // set by Wait
	attempts *attemptWatcher // set by Wait
}

// New follows app.
func New(app App, opts Options) *Follower { return &Follower{App: app, opts: opts} }

func (f *Follower) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, f.opts.CallTimeout)
}

// removeStaging deletes the staging directory; the AM removes it too on its
// way out, whichever comes first.
func (f *Follower) removeStaging() error {
	if f.FS == nil || f.AppID == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.opts.CallTimeout)
	defer cancel()
	return f.FS.RemoveStaging(ctx, f.AppID)
}

// silentPolls is how many report calls (or status page fetches) in a row
// may fail before Wait says that the RM (or the AM) is not answering.
const silentPolls = 2

// maxRMSilence is how long Wait keeps retrying an RM that does not answer
// before it gives up (the application goes on without it).
const maxRMSilence = 15 * time.Minute

// Wait polls the application's report until it ends, calling onEvent (if
// not nil) on every change of state or tracking URL, and returns how it
// ended (client adds a *JobError for a job that did not succeed). When ctx ends
// first, Wait kills the application and returns its final report with
// ctx's error. Either way the staging directory is removed.
func (s *Follower) Wait(ctx context.Context, onEvent func(Event)) (*Result, error) {
	defer s.removeStaging()
	var last *hadoopyarn.ApplicationReportProto
	failures := 0
	var silentSince time.Time
	notice := func(text string) {
		if onEvent != nil {
			onEvent(Event{Time: time.Now(), AppID: s.AppID, Notice: text})
		}
	}
	status := newStatusWatcher(s.StatusKey)
	status.notice = notice
	status.explain = func(line string) string { return s.explainWait(ctx, line) }
	defer status.close()
	s.status = status
	s.attempts = &attemptWatcher{}
	endCtx, stopEndWatch := context.WithCancel(ctx)
	defer stopEndWatch()
	var ended <-chan *contract.StatusReport // the AM's final report, once it is out
	var fastUntil time.Time
	for {
		cctx, cancel := s.call(ctx)
		r, err := s.RM.GetApplicationReport(cctx, s.ID)
		cancel()
		switch {
		case ctx.Err() != nil:
			return s.killed(ctx.Err(), onEvent, last)
		case err != nil:
			if failures++; failures == 1 {
				silentSince = time.Now()
			}
			if failures == silentPolls {
				notice(fmt.Sprintf("ResourceManager at %s not answering (%s); retrying", rmAddr(s.RM, err), shortCause(err)))
			}
			if time.Since(silentSince) > maxRMSilence {
				return s.result(last), fmt.Errorf("client: watching %s: no answer for %s: %w", s.AppID, maxRMSilence, err)
			}
		default:
			if failures >= silentPolls {
				notice(fmt.Sprintf("ResourceManager at %s answering again after %s", rmAddr(s.RM, nil), time.Since(silentSince).Round(time.Second)))
			}
			failures = 0
			if n := s.attempts.observe(r, func(prev int32) string { return s.attemptDiagnostics(ctx, prev) }); n != "" {
				notice(n)
				// A new AM: its task table starts over.
				status.last = nil
			}
			status.locate(r)
			if ended == nil && (status.last == nil || !status.last.Final) {
				ended = status.watchForEnd(endCtx, s.opts.PollInterval)
			}
			// Task changes first, so the tasks' ends come before the
			// application's. The AM lingers a moment after unregistering
			// for a watcher to read the final task table.
			status.poll(ctx, s.AppID, onEvent)
			if yarn.IsTerminal(r.GetYarnApplicationState()) {
				s.tellTheEndFromHistory(ctx, onEvent)
			}
			emit(onEvent, last, r)
			last = r
			if yarn.IsTerminal(r.GetYarnApplicationState()) {
				s.keepHistory(ctx)
				return s.finished(r)
			}
		}
		next := s.opts.PollInterval
		if time.Now().Before(fastUntil) {
			next = min(next, endPoll)
		}
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return s.killed(ctx.Err(), onEvent, last)
		case <-t.C:
		case rep := <-ended:
			t.Stop()
			// The job has ended: its AM unregisters in a moment. Ask the
			// ResourceManager often until it says so (a new AM attempt
			// starts the watch again).
			ended = nil
			status.apply(s.AppID, rep, onEvent)
			fastUntil = time.Now().Add(endPollWindow)
		}
	}
}

// Once the AM's report is final, the ResourceManager is asked every endPoll
// for endPollWindow at most (40 calls), then at the poll interval again.
const (
	endPoll       = 50 * time.Millisecond
	endPollWindow = 2 * time.Second
)

// Kill asks the RM to kill the application and waits until it ended.
func (s *Follower) Kill(ctx context.Context, reason string) (*Result, error) {
	r, err := s.RM.KillApplication(ctx, s.ID, reason)
	if err != nil {
		return s.result(r), fmt.Errorf("client: killing %s: %w", s.AppID, err)
	}
	return s.result(r), nil
}

func (s *Follower) killed(cause error, onEvent func(Event), last *hadoopyarn.ApplicationReportProto) (*Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.CallTimeout)
	defer cancel()
	res, err := s.Kill(ctx, "killed by "+s.User+": tfyarn was interrupted")
	if err != nil {
		return res, fmt.Errorf("%w (and %w)", cause, err)
	}
	if r := s.lastReport(ctx); r != nil {
		emit(onEvent, last, r)
	}
	return res, fmt.Errorf("client: waiting for %s: %w", s.AppID, cause)
}

func (s *Follower) lastReport(ctx context.Context) *hadoopyarn.ApplicationReportProto {
	r, err := s.RM.GetApplicationReport(ctx, s.ID)
	if err != nil {
		return nil
	}
	return r
}

func (s *Follower) finished(r *hadoopyarn.ApplicationReportProto) (*Result, error) {
	return s.result(r), nil
}

func (s *Follower) result(r *hadoopyarn.ApplicationReportProto) *Result {
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

// CallTimeout is the bound of each call to the cluster.
func (f *Follower) CallTimeout() time.Duration { return f.opts.CallTimeout }
