package localrun

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/executor"
	"github.com/tfyarn/tfyarn/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Run runs job's tasks as local processes and waits for the job's outcome
// (see Judge). Cancelling ctx (Ctrl-C) stops every task and ends the run
// KILLED; Run returns only once every program has been reaped. The error is
// for a run that could not start (a bad job, no port); a job that ran and
// failed is a Result with StatusFailed.
func Run(ctx context.Context, job taskspec.Job, opts Options) (*Result, error) {
	opts.setDefaults()
	if err := job.Validate(taskspec.ClusterLimits{}); err != nil {
		return nil, err
	}
	cmd, err := argv(job, opts)
	if err != nil {
		return nil, err
	}
	judge, err := ruleFor(opts.Success, job)
	if err != nil {
		return nil, err
	}
	groups := append([]taskspec.TaskGroup(nil), job.Tasks...)
	taskspec.SortGroups(groups)

	secret, err := rendezvous.NewSecret()
	if err != nil {
		return nil, fmt.Errorf("localrun: %w", err)
	}
	board, err := rendezvous.NewBoard(rendezvous.BoardConfig{Groups: groups, RegistrationTimeout: opts.RegistrationTimeout})
	if err != nil {
		return nil, fmt.Errorf("localrun: %w", err)
	}
	defer board.Close()
	srv, err := rendezvous.NewServer(secret, board)
	if err != nil {
		return nil, fmt.Errorf("localrun: %w", err)
	}
	// Loopback only: the secret guards the channel anyway, but nothing
	// outside this machine has any business with a local run.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("localrun: starting the rendezvous server: %w", err)
	}
	// The server outlives ctx: killed launchers still report their exits.
	srvCtx, stopServer := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(srvCtx, ln) }()
	defer func() {
		stopServer()
		<-served
	}()

	stdout, stderr := &sink{w: opts.Stdout}, &sink{w: opts.Stderr}
	r := &runner{
		opts:  opts,
		judge: judge,
		board: board,
		log:   newPrefixWriter(stderr, "[tfyarn] "),
		start: time.Now(),
	}
	appID := fmt.Sprintf("local_%d_%d", r.start.Unix(), os.Getpid())
	base := executor.Config{
		AMAddress: ln.Addr().String(),
		Secret:    secret,
		Host:      opts.Host,
		Command:   cmd,
		Dir:       opts.Dir,
		StopGrace: opts.StopGrace,
		// The board fails the rendezvous first, with a better message; this
		// only guards against a launcher outliving a silent server.
		RendezvousTimeout: 2 * opts.RegistrationTimeout,
	}
	ends := make(chan ended)
	// Launchers must not see ctx directly: the runner decides when each
	// one ends, so that a kill is recorded as such.
	taskCtx := context.WithoutCancel(ctx)
	for _, g := range groups {
		for _, id := range g.TaskIDs() {
			t := &task{
				id:     id,
				stdout: newPrefixWriter(stdout, "["+id.String()+"] "),
				stderr: newPrefixWriter(stderr, "["+id.String()+"] "),
				state:  TaskState{Task: id},
			}
			cfg := base
			cfg.Env = taskEnv(opts.Env, job, appID, id)
			t.start(taskCtx, cfg, ends)
			r.tasks = append(r.tasks, t)
		}
	}
	return r.wait(ctx, ends), nil
}

// runner follows the tasks until every one has ended.
type runner struct {
	opts  Options
	judge func([]TaskState) Verdict
	board *rendezvous.Board
	log   *prefixWriter
	start time.Time
	tasks []*task

	results  map[taskspec.TaskID]TaskResult
	endOrder uint64
	verdict  Verdict
	killed   error
	// lingering: the job succeeded and some tasks have the worker grace to
	// end by themselves (Verdict.Linger).
	lingering bool
	// stopAt is when each live task was ordered to stop, until its launcher
	// is cancelled for outliving the order.
	stopAt map[*task]time.Time
}

func (r *runner) wait(ctx context.Context, ends <-chan ended) *Result {
	r.results = map[taskspec.TaskID]TaskResult{}
	r.stopAt = map[*task]time.Time{}
	var stuck, graceOver <-chan time.Time
	done := ctx.Done()
	for running := len(r.tasks); running > 0; {
		select {
		case e := <-ends:
			running--
			r.record(e)
			switch {
			case r.killed != nil:
			case r.verdict.Outcome == Undecided:
				if v := r.judge(r.states()); v.Outcome != Undecided {
					r.decide(v)
					if r.lingering {
						graceOver = time.After(r.opts.WorkerGrace)
					}
				}
			case r.lingering:
				// A lingering task ended: a TF1 job's ps may go once the
				// workers are gone, and the grace is over with the last.
				v := r.judge(r.states())
				decided, _, _ := strings.Cut(firstLine(r.verdict.Diagnostics), ";")
				r.stop(v.Stop, "the job succeeded: "+decided)
				if len(v.Linger) == 0 {
					r.lingering, graceOver = false, nil
				}
			}
		case <-graceOver:
			graceOver, r.lingering = nil, false
			v := r.judge(r.states())
			r.logf("%s still running %s after %s: stopping them", joinIDs(v.Linger), r.opts.WorkerGrace, firstLine(r.verdict.Diagnostics))
			r.stop(v.Linger, fmt.Sprintf("still running %s after the job succeeded", r.opts.WorkerGrace))
		case <-done:
			done = nil
			switch {
			case r.verdict.Outcome == Undecided:
				r.killed = context.Cause(ctx)
				r.logf("interrupted (%v): stopping every task", r.killed)
				r.board.Fail(errors.New("the local run was interrupted"))
				r.stopAll(true)
			case r.lingering:
				// The outcome stands; the grace is cut short.
				graceOver, r.lingering = nil, false
				r.logf("interrupted (%v) during the worker grace: stopping every task", context.Cause(ctx))
				r.stopAll(true)
			}
		case <-stuck:
			r.cancelOverdue()
		}
		stuck = r.nextOverdue()
	}
	return r.result()
}

// record turns a launcher's end into the task's state and result.
func (r *runner) record(e ended) {
	t := e.task
	r.endOrder++
	res := TaskResult{Task: t.id, ExitCode: e.code, Ended: time.Since(r.start)}
	for _, reg := range r.board.Registrations() {
		if reg.Task == t.id {
			res.Addr = reg.Addr()
		}
	}
	if rep, ok := r.board.Exit(t.id); ok {
		res.Stopped = rep.Stopped
		res.StderrTail = rep.StderrTail
	}
	res.Stopped = res.Stopped || t.stopAsked
	if e.err != nil {
		res.LauncherError = e.err.Error()
	}
	failure := describeFailure(res)
	t.state = TaskState{Task: t.id, Ended: true, ExitCode: e.code, Stopped: res.Stopped, EndOrder: r.endOrder, Failure: failure}
	if t.state.Failed() {
		res.Failure, _, _ = strings.Cut(failure, "\n")
	}
	r.results[t.id] = res
}

// describeFailure is the diagnostics entry of a failed task: a first line
// with its name, exit code and last stderr line (where a Python traceback
// says what went wrong), then the stderr tail for context.
func describeFailure(res TaskResult) string {
	if res.LauncherError != "" && len(res.StderrTail) == 0 {
		return fmt.Sprintf("%s failed (exit code %d): %s", res.Task, res.ExitCode, res.LauncherError)
	}
	s := fmt.Sprintf("%s exited with code %d", res.Task, res.ExitCode)
	tail := res.StderrTail
	for len(tail) > 0 && strings.TrimSpace(tail[len(tail)-1]) == "" {
		tail = tail[:len(tail)-1]
	}
	if len(tail) == 0 {
		return s
	}
	if len(tail) > diagnosticLines {
		tail = tail[len(tail)-diagnosticLines:]
	}
	return s + ": " + tail[len(tail)-1] + "\n  stderr:\n    " + strings.Join(tail, "\n    ")
}

func (r *runner) states() []TaskState {
	out := make([]TaskState, len(r.tasks))
	for i, t := range r.tasks {
		out[i] = t.state
	}
	return out
}

// decide records the verdict and stops whatever still runs, except the
// tasks a success lets linger.
func (r *runner) decide(v Verdict) {
	r.verdict = v
	first := firstLine(v.Diagnostics)
	r.logf("job %s (%s)", v.Outcome, first)
	if len(v.Stop) > 0 && v.Outcome != Succeeded { // a success's diagnostics already say so
		r.logf("stopping %s", joinIDs(v.Stop))
	}
	// Tasks still waiting for the spec (a failure before every task met)
	// learn the rendezvous is off; running ones get the stop order.
	r.board.Fail(fmt.Errorf("the job is over: %s", first))
	reason := "the job " + strings.ToLower(v.Outcome.String()) + ": " + first
	if v.Outcome == Succeeded && len(v.Linger) > 0 {
		r.lingering = true
		r.stop(v.Stop, reason)
		return
	}
	r.board.StopAll(reason)
	r.stopAll(false)
}

// stop orders tasks stopped, one by one.
func (r *runner) stop(ids []taskspec.TaskID, reason string) {
	for _, t := range r.tasks {
		if !t.state.Ended && !t.stopAsked && slices.Contains(ids, t.id) {
			r.board.Stop(t.id, reason)
			r.markStopped(t)
		}
	}
}

// stopAll marks every live task as stopped on purpose, and with cancel
// also cancels its launcher, which stops the program itself.
func (r *runner) stopAll(cancel bool) {
	for _, t := range r.tasks {
		if t.state.Ended {
			continue
		}
		r.markStopped(t)
		if cancel {
			t.cancel()
			delete(r.stopAt, t)
		}
	}
}

func (r *runner) markStopped(t *task) {
	if !t.stopAsked {
		t.stopAsked = true
		r.stopAt[t] = time.Now()
	}
}

// stuckAfter is how long a stopped task may take before its launcher is
// cancelled as well.
func (r *runner) stuckAfter() time.Duration { return r.opts.StopGrace + stuckMargin }

// nextOverdue fires when the earliest stop order still out becomes overdue
// (nil when none is out).
func (r *runner) nextOverdue() <-chan time.Time {
	var first time.Time
	for t, at := range r.stopAt {
		if t.state.Ended {
			delete(r.stopAt, t)
		} else if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	if first.IsZero() {
		return nil
	}
	return time.After(time.Until(first.Add(r.stuckAfter())))
}

// cancelOverdue cancels the launchers of the tasks still running
// stuckAfter after their stop order: the order travels by long-poll, and a
// launcher that missed it must not hang the run.
func (r *runner) cancelOverdue() {
	var overdue []taskspec.TaskID
	for _, t := range r.tasks {
		if at, ok := r.stopAt[t]; ok && !t.state.Ended && time.Since(at) >= r.stuckAfter() {
			overdue = append(overdue, t.id)
			t.cancel()
			delete(r.stopAt, t)
		}
	}
	if len(overdue) > 0 {
		r.logf("%s still running %s after the stop order: cancelling their launchers", joinIDs(overdue), r.stuckAfter())
	}
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

func (r *runner) result() *Result {
	res := &Result{Duration: time.Since(r.start)}
	switch {
	case r.killed != nil:
		res.Status, res.Diagnostics = StatusKilled, fmt.Sprintf("killed: %v", r.killed)
	case r.verdict.Outcome == Succeeded:
		res.Status, res.Diagnostics = StatusSucceeded, r.finalDiagnostics()
	case r.verdict.Outcome == Failed:
		res.Status, res.Diagnostics = StatusFailed, r.finalDiagnostics()
	default:
		res.Status, res.Diagnostics = StatusFailed, "every task ended without a decision"
	}
	for _, t := range r.tasks {
		res.Tasks = append(res.Tasks, r.results[t.id])
	}
	r.logf("%s in %s", res.Status, res.Duration.Round(100*time.Millisecond))
	return res
}

// finalDiagnostics judges the tasks' final states again: the outcome is the
// one decided, but the diagnostics now say what was stopped after it and
// which late failures were ignored.
func (r *runner) finalDiagnostics() string {
	if v := r.judge(r.states()); v.Outcome == r.verdict.Outcome {
		return v.Diagnostics
	}
	return r.verdict.Diagnostics
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.log, format+"\n", args...)
}
