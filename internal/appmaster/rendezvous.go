package appmaster

import (
	"context"
	"errors"
	"fmt"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/appmaster/webui"
	"github.com/tfyarn/tfyarn/internal/connlimit"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// RendezvousConfig is what StartRendezvous needs.
type RendezvousConfig struct {
	AppID string
	User  string // who submitted the job: the web UI's log links name them
	Job   taskspec.Job
	// Secret authenticates the launchers; it reaches them in their
	// containers' credentials, never on a command line or in the
	// environment, and is never logged.
	Secret []byte
	// Host is the name the launchers and clients reach the AM by (the
	// NodeManager's host).
	Host string
	// Listen is the address to bind; "" binds Host, port 0 (any free
	// port); ":port" binds Host at that port. Where Host cannot be bound,
	// every interface is.
	Listen string
	// Web guards the status JSON and the web UI (webgate.go).
	Web WebAccess
	// RegistrationTimeout: once the first cluster task registered, how long
	// the others have (0: taskspec.DefaultRendezvousTimeout).
	RegistrationTimeout time.Duration
	// Log receives the server's refusals (peer, endpoint and reason only);
	// nil discards.
	Log io.Writer
	// Logf logs the AM's lines; nil discards.
	Logf func(format string, args ...any)
	// Program, when set, is what each task's launcher runs, handed to it
	// with the cluster spec (see rendezvous.Program): the job's program
	// reaches tasks only this way, never through their launch contexts.
	Program func(taskspec.TaskID) (rendezvous.Program, bool)
	// SaveResult, when set, keeps the tasks' results (rendezvous.ResultHandler); nil: the
	// launchers' results are refused.
	SaveResult SaveResultFunc
	// FreshCredentials says the AM publishes fresh credentials while the
	// job runs (a keytab job's); without, the launchers are told at once
	// that none come (rendezvous.WithoutCredentials).
	FreshCredentials bool

	// listen replaces net.Listen in tests.
	listen func(network, address string) (net.Listener, error)
}

// TaskRendezvous is the AM's side of the tasks' launchers: a
// rendezvous.Board for the job served by a rendezvous.Server, plus the
// status page, on one HTTP listener on the AM's host. It implements
// Launchers for the loop, turning what the launchers report into machine
// events.
type TaskRendezvous struct {
	appID  string
	board  *rendezvous.Board
	ln     net.Listener
	hs     *http.Server
	addr   string // advertised host:port
	uiPath string // the web UI's path, with the status key's token
	logf   func(format string, args ...any)
	// specOut is the log line of the cluster spec going out: when every
	// cluster task registered, or for an elastic job --min-workers of them.
	specOut string
	served  chan struct{} // closed when Serve returns
	notify  chan struct{} // Notify: the board's signal, or Serve failing
	closed  chan struct{} // closed by Close: ends the forwarding of the board's signal

	mu       sync.Mutex
	serveErr error               // why Serve stopped on its own; nil while serving or after Close
	reported bool                // serveErr was turned into an event
	tails    map[string][]string // by task and container: see tailKey
	page     statusPage
	results  *resultSpool // nil without RendezvousConfig.SaveResult
	// sampled are the GPU samples since the last Drain, for the machine's
	// --gpu-idle-timeout (core.GPUsSampled); at most one per task.
	sampled map[taskspec.TaskID]core.GPUsSampled

	// With a previous AM attempt (AnnounceAdopted): its saved tasks by
	// container, and how the adopted ones' launchers learn this attempt.
	adopting map[string]amattempt.Task
	announce func(amattempt.Task)
}

// StartRendezvous listens and serves until Close.
func StartRendezvous(cfg RendezvousConfig) (*TaskRendezvous, error) {
	if cfg.Host == "" {
		return nil, errors.New("appmaster: rendezvous: no host to advertise")
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.RegistrationTimeout <= 0 {
		cfg.RegistrationTimeout = taskspec.DefaultRendezvousTimeout
	}
	board, err := rendezvous.NewBoard(rendezvous.BoardConfig{Groups: cfg.Job.Tasks, RegistrationTimeout: cfg.RegistrationTimeout, RequireAssignment: true, StartAfter: cfg.Job.StartAfter, MinWorkers: cfg.Job.MinWorkers})
	if err != nil {
		return nil, fmt.Errorf("appmaster: %w", err)
	}
	handler := &metricsBoard{Board: board}
	opts := []rendezvous.Option{rendezvous.WithLogger(slog.New(slog.NewTextHandler(cfg.Log, nil)))}
	if cfg.Program != nil {
		opts = append(opts, rendezvous.WithPrograms(cfg.Program))
	}
	if !cfg.FreshCredentials {
		opts = append(opts, rendezvous.WithoutCredentials())
	}
	srv, err := rendezvous.NewServer(cfg.Secret, handler, opts...)
	if err != nil {
		board.Close()
		return nil, fmt.Errorf("appmaster: %w", err)
	}
	if cfg.listen == nil {
		cfg.listen = net.Listen
	}
	ln, err := listenOnHost(cfg)
	if err != nil {
		board.Close()
		return nil, fmt.Errorf("appmaster: rendezvous: %w", err)
	}
	if cfg.Web.StatusKey == nil {
		if cfg.Web.StatusKey, err = contract.NewStatusKey(); err != nil {
			board.Close()
			return nil, fmt.Errorf("appmaster: %w", err)
		}
	}
	// Strangers hold at most rendezvous.StrangerBound connections;
	// launchers (a handful of connections each: long polls beside
	// reports) leave that pool once they signed a request.
	ln = connlimit.NewListener(ln, rendezvous.StrangerBound(cfg.Job.TaskCount()), max(rendezvous.DefaultMaxAuthenticatedConns, 8*cfg.Job.TaskCount()))
	specOut := "the cluster spec is out: every cluster task registered"
	if cfg.Job.MinWorkers > 0 {
		specOut = fmt.Sprintf("the cluster spec is out: %d workers registered (--min-workers); later workers join as they register", cfg.Job.MinWorkers)
	}
	r := &TaskRendezvous{
		specOut: specOut,
		appID:   cfg.AppID,
		board:   board,
		ln:      ln,
		addr:    net.JoinHostPort(cfg.Host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)),
		logf:    cfg.Logf,
		served:  make(chan struct{}),
		notify:  make(chan struct{}, 1),
		closed:  make(chan struct{}),
		tails:   map[string][]string{},
	}
	r.page.init(cfg.AppID, cfg.User, cfg.Job)
	handler.page = &r.page
	if cfg.SaveResult != nil {
		handler.results = newResultSpool(resultSpoolDir, cfg.SaveResult, &r.page, cfg.Logf)
		r.results = handler.results
	}
	handler.gpus = r.gpusSampled
	mux := http.NewServeMux()
	mux.Handle(rendezvous.PathPrefix, srv)
	r.uiPath = contract.ProxiedPrefix + contract.WebPathToken(cfg.Web.StatusKey) + "/"
	mux.Handle("/", newWebGate(cfg.User, cfg.Web, webViews{
		status: http.HandlerFunc(r.page.serveJSON), ui: webui.Handler(r.page.currentReport, nil, false),
		publicStatus: http.HandlerFunc(r.page.servePublicJSON), publicUI: webui.Handler(r.page.publicReport, nil, true),
	}, cfg.Logf))
	r.hs = rendezvous.HTTPServer(mux, slog.New(slog.NewTextHandler(cfg.Log, nil)))
	go r.serve()
	go r.forwardNotify()
	return r, nil
}

// serve runs the HTTP server until Close. Serve ending on its own (the
// listener failing) leaves no way for a launcher to register or report, so
// it is logged and turned into RendezvousFailed by the next Drain: the job
// fails with that reason instead of waiting for registrations that cannot
// arrive.
func (r *TaskRendezvous) serve() {
	defer close(r.served)
	err := r.hs.Serve(r.ln)
	if err == nil || errors.Is(err, http.ErrServerClosed) {
		return
	}
	r.logf("the rendezvous server stopped: %v", err)
	r.mu.Lock()
	r.serveErr = err
	r.mu.Unlock()
	r.signal()
}

// forwardNotify passes the board's signal on to Notify until Close.
func (r *TaskRendezvous) forwardNotify() {
	for {
		select {
		case <-r.board.Notify():
			r.signal()
		case <-r.closed:
			return
		}
	}
}

func (r *TaskRendezvous) signal() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// gpusSampled queues a task's GPU sample for the machine; a newer one
// replaces one not drained yet.
func (r *TaskRendezvous) gpusSampled(s core.GPUsSampled) {
	r.mu.Lock()
	if r.sampled == nil {
		r.sampled = map[taskspec.TaskID]core.GPUsSampled{}
	}
	r.sampled[s.Task] = s
	r.mu.Unlock()
	r.signal()
}

// Address is the rendezvous server's host:port as the launchers reach it
// (TFYARN_AM_ADDRESS).
func (r *TaskRendezvous) Address() string { return r.addr }

// Port is the port the server listens on.
func (r *TaskRendezvous) Port() int { return r.ln.Addr().(*net.TCPAddr).Port }

// TrackingURL is the web UI, what the AM registers as its tracking URL: its
// path carries a token of the status key, so that only the
// ResourceManager's web proxy (and whoever YARN shows the application's
// full report) can address it.
func (r *TaskRendezvous) TrackingURL() string { return "http://" + r.addr + r.uiPath }

// listenOnHost binds cfg.Listen's port on the AM's host (the NodeManager's
// address the launchers and the proxy reach), not every interface; when the
// host's name does not bind here (a name for a NAT address, say), every
// interface.
func listenOnHost(cfg RendezvousConfig) (net.Listener, error) {
	port := "0"
	if cfg.Listen != "" {
		h, p, err := net.SplitHostPort(cfg.Listen)
		if err != nil {
			return nil, err
		}
		if h != "" {
			return cfg.listen("tcp", cfg.Listen)
		}
		port = p
	}
	ln, err := cfg.listen("tcp", net.JoinHostPort(cfg.Host, port))
	if err == nil {
		return ln, nil
	}
	cfg.Logf("binding %s (%v): listening on every interface", net.JoinHostPort(cfg.Host, port), err)
	return cfg.listen("tcp", ":"+port)
}

// Assign implements Launchers.
func (r *TaskRendezvous) Assign(task taskspec.TaskID, containerID string) {
	r.board.Assign(task, containerID)
}

// Stop implements Launchers.
func (r *TaskRendezvous) Stop(task taskspec.TaskID, reason string) { r.board.Stop(task, reason) }

// StopAll implements Launchers. Launchers still waiting for the cluster
// spec give up too.
func (r *TaskRendezvous) StopAll(reason string) {
	r.board.StopAll(reason)
	r.board.Fail(errors.New(reason))
}

// Warn implements Launchers.
func (r *TaskRendezvous) Warn(w core.Warning) {
	kind := contract.WarningPreemption
	if w.Kind == core.WarnGPUIdle {
		kind = contract.WarningGPUIdle
	}
	r.board.Warn(w.Task, w.Container.ID, rendezvous.Notice{Kind: kind, Deadline: w.Deadline, Reason: w.Reason})
}

// Reset implements Launchers.
func (r *TaskRendezvous) Reset() { r.board.Reset() }

// Notify implements Launchers.
func (r *TaskRendezvous) Notify() <-chan struct{} { return r.notify }

// Drain implements Launchers: registrations become TaskRegistered, a
// program's exit the ContainerCompleted of its container (the launcher
// exits right after, so the task is over; the RM's report of the container
// comes a heartbeat or two later and is then ignored), a rendezvous that
// cannot complete RendezvousFailed, and so does the server ceasing to serve
// (reported once).
func (r *TaskRendezvous) Drain() []core.Event {
	var out []core.Event
	r.mu.Lock()
	for _, s := range r.sampled {
		out = append(out, s)
	}
	r.sampled = nil
	if r.serveErr != nil && !r.reported {
		r.reported = true
		out = append(out, core.RendezvousFailed{Reason: fmt.Sprintf(
			"the AM's rendezvous server at %s stopped serving (%v): no task can register or report", r.addr, r.serveErr)})
	}
	r.mu.Unlock()
	for _, ev := range r.board.Drain() {
		switch e := ev.(type) {
		case rendezvous.TaskRegistered:
			reg := e.Registration
			if e.Again {
				r.logf("%s registered again at %s (container %s, launcher pid %d): its launcher found this attempt", reg.Task, reg.Addr(), reg.ContainerID, reg.PID)
			} else {
				r.logf("%s registered at %s (container %s, launcher pid %d)", reg.Task, reg.Addr(), reg.ContainerID, reg.PID)
			}
			out = append(out, core.TaskRegistered{Task: reg.Task, Host: reg.Host, Port: reg.Port})
		case rendezvous.SpecPublished:
			r.logf("%s", r.specOut)
		case rendezvous.RendezvousFailed:
			r.logf("rendezvous failed: %v", e.Err)
			out = append(out, core.RendezvousFailed{Reason: e.Err.Error()})
		case rendezvous.TaskExited:
			rep := e.Report
			how := "exited with code " + strconv.Itoa(rep.ExitCode)
			if rep.Stopped {
				how += " after a stop order"
			}
			r.logf("%s's program %s (container %s)", rep.Task, how, rep.ContainerID)
			r.mu.Lock()
			r.tails[tailKey(rep.Task, rep.ContainerID)] = rep.StderrTail
			r.mu.Unlock()
			switch {
			case rep.ContainerID == "":
			case rep.Signal != "" && !rep.Stopped:
				// Killed from outside: YARN's report of the container says
				// why; the machine waits for it, within a bound.
				r.logf("%s's container got %s from outside: waiting up to %s for YARN's reason", rep.Task, rep.Signal, taskspec.YarnReasonWait)
				out = append(out, core.ProgramSignalled{ID: rep.ContainerID, ExitStatus: int32(rep.ExitCode), Diagnostics: "the program " + how + " after " + rep.Signal + " from outside"})
			default:
				out = append(out, core.ContainerCompleted{ID: rep.ContainerID, ExitStatus: int32(rep.ExitCode), Diagnostics: "the program " + how, ByLauncher: true,
					LogRule: core.LogRule(rep.LogRule), LogLine: rep.LogLine, NoRestart: rep.NoRestart})
			}
		}
	}
	return out
}

// StderrTail implements Launchers.
func (r *TaskRendezvous) StderrTail(task taskspec.TaskID, containerID string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tails[tailKey(task, containerID)]
}

func tailKey(task taskspec.TaskID, containerID string) string {
	return task.String() + " " + containerID
}

// Observe is the loop's Observe hook: it updates the status page.
func (r *TaskRendezvous) Observe(s Snapshot) { r.page.update(s) }

// Close stops serving. A client that has been watching the status page
// gets up to linger to fetch the final one (the AM process ends right
// after, and with it the page).
func (r *TaskRendezvous) Close(linger time.Duration) {
	r.page.awaitFinalFetch(linger)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = r.hs.Shutdown(ctx)
	_ = r.hs.Close()
	<-r.served
	close(r.closed)
	r.board.Close()
	if r.results != nil {
		r.results.close()
	}
}

// resultSpoolDir is where, in the AM's working directory, the tasks' results arrive.
const resultSpoolDir = "tfyarn-results"
