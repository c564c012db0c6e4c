package localrun

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/buildinfo"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/executor"
	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/tasklogs/prefix"
	pythonsdk "github.com/tfyarn/tfyarn/python"
	"github.com/tfyarn/tfyarn/taskspec"
)

// tickEvery is how often the core's clock moves: its timeouts (worker
// grace, stop escalation) are seconds, so a fifth of one is precise enough.
const tickEvery = 200 * time.Millisecond

// Run runs job's tasks as local processes and waits for the job's outcome,
// decided by the ApplicationMaster's own core (package appmaster/core) with
// the same success rule and stops as on YARN. Cancelling ctx (Ctrl-C) stops
// every task and ends the run KILLED; Run returns only once every program
// has been reaped. The error is for a run that could not start (a bad job,
// no port); a job that ran and failed is a Result with StatusFailed.
func Run(ctx context.Context, job taskspec.Job, opts Options) (*Result, error) {
	opts.setDefaults()
	if err := job.Validate(taskspec.ClusterLimits{}); err != nil {
		return nil, err
	}
	cmd, err := argv(job, opts)
	if err != nil {
		return nil, err
	}
	groups := append([]taskspec.TaskGroup(nil), job.Tasks...)
	taskspec.SortGroups(groups)

	secret, err := rendezvous.NewSecret()
	if err != nil {
		return nil, fmt.Errorf("localrun: %w", err)
	}
	board, err := rendezvous.NewBoard(rendezvous.BoardConfig{Groups: groups, RegistrationTimeout: opts.RegistrationTimeout, RequireAssignment: true, StartAfter: job.StartAfter, MinWorkers: job.MinWorkers})
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

	// The framework's service for the whole job, as the AM serves it, with
	// a key of this run's.
	env := opts.Env
	var serviceKey []byte
	if frameworks.JobServiceOf(job, nil) != nil {
		if serviceKey, err = framework.NewJobServiceKey(); err != nil {
			return nil, fmt.Errorf("localrun: %w", err)
		}
	}
	if svc := frameworks.JobServiceOf(job, serviceKey); svc != nil {
		storeLn, err := net.Listen("tcp", net.JoinHostPort(opts.Host, "0"))
		if err != nil {
			return nil, fmt.Errorf("localrun: the job's side service: %w", err)
		}
		storeDone := make(chan error, 1)
		go func() { storeDone <- svc.Serve(srvCtx, storeLn, func(string, ...any) {}) }()
		defer func() { stopServer(); <-storeDone }()
		env = append(append([]string(nil), env...), contract.EnvJobService+"="+storeLn.Addr().String())
	}

	// tfyarn's Python package, written once for every task's PYTHONPATH.
	sdk, err := os.MkdirTemp("", "tfyarn-python-sdk-")
	if err != nil {
		return nil, fmt.Errorf("localrun: %w", err)
	}
	defer os.RemoveAll(sdk)
	if err := pythonsdk.Extract(sdk, buildinfo.Current().Version); err != nil {
		return nil, fmt.Errorf("localrun: %w", err)
	}

	start := time.Now()
	p := newProcesses(ctx, job, opts, board, secret, ln.Addr().String(), cmd, env, start)
	p.serviceKey = serviceKey
	p.base.PythonSDK = sdk
	// The result files stay where the programs wrote them, in a directory of their own that
	// outlives the run's working directory (a temporary one when it ships files).
	if p.base.ResultDir, err = os.MkdirTemp("", "tfyarn-local-results-"); err != nil {
		return nil, fmt.Errorf("localrun: %w", err)
	}
	p.base.KeepResult = true
	d, err := newDriver(job, opts, p)
	if err != nil {
		os.Remove(p.base.ResultDir)
		return nil, err
	}
	killed := drive(ctx, d, board, p)
	res := result(d, board, start, killed, p)
	res.ResultFiles = resultFiles(p.base.ResultDir, res.Tasks)
	return res, nil
}

// resultFiles are the result files the tasks left in dir, by task, each made 0600 (in dir,
// 0700, as os.MkdirTemp makes it): whatever the program's umask gave it, a result outlives the
// run in a shared TMPDIR. dir is removed when they left none.
func resultFiles(dir string, tasks []TaskResult) map[string]string {
	out := map[string]string{}
	for _, t := range tasks {
		p := filepath.Join(dir, contract.ResultFileName(string(t.Task.Type), t.Task.Index))
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() && os.Chmod(p, 0o600) == nil {
			out[t.Task.String()] = p
		}
	}
	if len(out) == 0 {
		os.RemoveAll(dir)
		return nil
	}
	return out
}

// newProcesses is how the run starts its tasks' launchers: each calls the
// rendezvous at amAddress and runs cmd with env, its output prefixed with its
// task's name.
func newProcesses(ctx context.Context, job taskspec.Job, opts Options, board *rendezvous.Board, secret []byte, amAddress string, cmd, env []string, start time.Time) *processes {
	stdout, stderr := prefix.NewSink(opts.Stdout), prefix.NewSink(opts.Stderr)
	return &processes{
		board:  board,
		secret: secret,
		log:    prefix.NewWriter(stderr, "[tfyarn] "),
		// Launchers must not see ctx directly: the driver decides when each
		// one ends, so that a kill is recorded as such.
		ctx:     context.WithoutCancel(ctx),
		stdout:  stdout,
		stderr:  stderr,
		job:     job,
		appID:   fmt.Sprintf("local_%d_%d", start.Unix(), os.Getpid()),
		running: map[string]*process{},
		errs:    map[taskspec.TaskID]string{},
		ends:    make(chan ended),
		base: executor.Config{
			AMAddress:        amAddress,
			Host:             opts.Host,
			Command:          cmd,
			Dir:              opts.Dir,
			ProgramStopGrace: opts.ProgramStopGrace,
			// The board fails the rendezvous first, with a better message;
			// this only guards against a launcher outliving a silent server.
			RendezvousTimeout: 2 * opts.RegistrationTimeout,
		},
		env: env,
	}
}

// drive feeds the driver what happens (the launchers' ends, the board's
// events, ticks, ctx's cancellation) until the job is decided and every
// task has ended. killed is why ctx was cancelled, when that killed the job.
func drive(ctx context.Context, d *driver, board *rendezvous.Board, p *processes) (killed error) {
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	done := ctx.Done()
	d.begin(time.Now())
	for !d.done() {
		select {
		case e := <-p.ends:
			if e.err != nil {
				p.errs[p.running[e.container].task] = e.err.Error()
			}
			delete(p.running, e.container)
			d.exited(time.Now(), e.container, e.code, e.diagnostics(), e.noRestart)
		case <-board.Notify():
			d.step(boardEvents(board, p)...)
		case now := <-tick.C:
			d.step(core.Tick{Now: now})
		case <-done:
			done = nil
			if d.fin == nil {
				killed = context.Cause(ctx)
				p.logf("interrupted (%v): stopping every task", killed)
				d.step(core.Tick{Now: time.Now()}, core.KillRequested{})
			}
		}
	}
	return killed
}

// boardEvents turns what the launchers told the rendezvous into core
// events. Their programs' ends come from the launchers themselves (ends),
// which also covers a launcher that failed before its program ran.
func boardEvents(board *rendezvous.Board, p *processes) []core.Event {
	var out []core.Event
	for _, ev := range board.Drain() {
		switch e := ev.(type) {
		case rendezvous.TaskRegistered:
			reg := e.Registration
			out = append(out, core.TaskRegistered{Task: reg.Task, Host: reg.Host, Port: reg.Port})
		case rendezvous.RendezvousFailed:
			p.logf("rendezvous failed: %v", e.Err)
			out = append(out, core.RendezvousFailed{Reason: e.Err.Error()})
		}
	}
	return out
}

// result is the run's outcome from the core's final task states and what
// the launchers reported.
func result(d *driver, board *rendezvous.Board, start time.Time, killed error, p *processes) *Result {
	res := &Result{Duration: time.Since(start), Restarts: d.m.Restarts()}
	tasks := d.m.Tasks()
	tail := func(t core.TaskStatus) []string {
		if rep, ok := board.Exit(t.Task); ok {
			return rep.StderrTail
		}
		return nil
	}
	switch {
	case killed != nil:
		res.Status, res.Diagnostics = StatusKilled, fmt.Sprintf("killed: %v", killed)
	case d.fin.Status == core.Succeeded:
		res.Status = StatusSucceeded
	case d.fin.Status == core.Killed:
		res.Status = StatusKilled
	default:
		res.Status = StatusFailed
	}
	if res.Diagnostics == "" {
		res.Diagnostics = core.WithStderr(d.fin.Diagnostics, tasks, tail)
	}
	addrs := map[taskspec.TaskID]string{}
	for _, reg := range board.Registrations() {
		addrs[reg.Task] = reg.Addr()
	}
	for _, t := range tasks {
		tr := TaskResult{
			Task:       t.Task,
			Addr:       addrs[t.Task],
			ExitCode:   d.codes[t.Task],
			Stopped:    t.StopRequested,
			StderrTail: tail(t),
			Attempt:    t.Attempt,
			// The latest run's: a restarted task's earlier errors are in
			// the diagnostics that caused the restart.
			LauncherError: p.errs[t.Task],
		}
		if at, ok := d.ended[t.Task]; ok {
			tr.Ended = at.Sub(start)
		}
		if t.State == core.TaskFailed {
			tr.Failure = t.Failure
			if s := core.StderrSummary(lastLine(tr.StderrTail)); s != "" {
				tr.Failure += ": " + s
			}
		}
		res.Tasks = append(res.Tasks, tr)
	}
	p.logf("%s in %s", res.Status, res.Duration.Round(100*time.Millisecond))
	return res
}

// lastLine is the last non-blank line of a stderr tail, where a Python
// traceback says what went wrong.
func lastLine(tail []string) []string {
	for i := len(tail) - 1; i >= 0; i-- {
		if strings.TrimSpace(tail[i]) != "" && !strings.HasPrefix(strings.TrimSpace(tail[i]), "tfyarn task ") {
			return tail[i : i+1]
		}
	}
	return nil
}
