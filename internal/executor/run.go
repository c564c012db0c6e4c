package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
)

// Exit codes of a launcher that never ran the program. A program's own
// code, or 128+signal, is returned as is; 126 and 127 follow the shell for
// a program that cannot be started.
const (
	ExitLauncherFailed = 1 // rendezvous failed, or the port could not be reserved
	ExitBadConfig      = 2
)

// retakeWait bounds the retries of a port re-taken from a predecessor
// (Config.Port).
const retakeWait = 30 * time.Second

// Run is `tfyarn task`: it reserves a port, registers it with the AM,
// waits for the cluster spec, runs the program (Config.Command, else the
// one the AM sends with the spec) with TF_CONFIG, forwards
// SIGTERM and SIGINT to it, obeys the AM's stop order and reports the
// exit. It returns the code the launcher should exit with: the program's
// (128+N when signal N killed it). err explains a launcher failure; a
// program that ran and failed is not one.
func Run(ctx context.Context, cfg Config) (exitCode int, err error) {
	if err := cfg.setDefaults(); err != nil {
		return ExitBadConfig, err
	}
	log := &logger{w: cfg.Stderr, prefix: "tfyarn task " + cfg.Task.String() + ": "}
	sigs := cfg.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 4)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
		defer signal.Stop(ch)
		sigs = ch
	}

	res, err := reservePort(ctx, cfg.Port)
	if err != nil {
		return ExitLauncherFailed, fmt.Errorf("task launcher: %w", err)
	}
	defer res.Release()

	if ctl := listenForLaterAttempts(&cfg, log); ctl != nil {
		defer ctl.Close()
		cfg.controlPort = ctl.Port()
	}
	copts := cfg.ClientOptions
	if o := locatorOption(&cfg, log); o != nil {
		copts = append(copts[:len(copts):len(copts)], o)
	}
	client, err := rendezvous.NewClient(cfg.AMAddress, cfg.ContainerID, cfg.Secret, copts...)
	if err != nil {
		return ExitBadConfig, fmt.Errorf("task launcher: %w", err)
	}
	defer client.Close()
	// fail says why the program cannot run, tells the AM (the task's exit, the reason as its
	// stderr tail) and returns what Run returns.
	fail := func(code int, err error) (int, error) {
		log.printf("%v", err)
		report(&cfg, client, log, rendezvous.ExitReport{Task: cfg.Task, ContainerID: cfg.ContainerID, ExitCode: code, StderrTail: []string{err.Error()}})
		return code, err
	}

	pyDirs, tokens, err := prepareBeforeRegistering(ctx, &cfg, log)
	if err != nil {
		return fail(ExitLauncherFailed, err)
	}

	reg := rendezvous.Registration{Task: cfg.Task, Host: cfg.Host, Port: res.Port, ContainerID: cfg.ContainerID, PID: os.Getpid(), ControlPort: cfg.controlPort}
	ts, sig, err := meet(ctx, &cfg, client, reg, sigs)
	if sig != nil {
		return 128 + signalNumber(sig), fmt.Errorf("task launcher: %s arrived before the program started", describeSignal(sig))
	}
	if err != nil {
		return ExitLauncherFailed, fmt.Errorf("task launcher: %w", err)
	}
	start, err := prepareProgram(&cfg, ts, res.Port, pyDirs, tokens)
	if err != nil {
		return fail(ExitLauncherFailed, err)
	}
	if start.hookDir != "" {
		defer os.RemoveAll(start.hookDir)
	}
	start.env, start.checkpoints = restoreCheckpoints(ctx, &cfg, start.env, log)
	launch, argv, env := start.launch, start.launch.Argv, start.env
	log.printf("%s at %s, %s", cfg.Task, reg.Addr(), launch.Describe)

	hold := launch.HoldPort && !cfg.ReleasePortBeforeExec
	storeCtx, stopStore := context.WithCancel(ctx)
	defer stopStore()
	if err := serveSideServiceOrReleasePort(storeCtx, launch, hold, res, cfg.Host, log); err != nil {
		return fail(ExitLauncherFailed, err)
	}
	mark, env := markProgramProcesses(env, log)
	tail := newTailBuffer(stderrTailLines, rendezvous.MaxStderrLineLen)
	if cfg.logRules, err = newLogRules(cfg.FailOnLog, cfg.ExcludeNodeOnLog); err != nil {
		return fail(ExitBadConfig, err)
	}
	tail.onLine = cfg.logRules.check
	prog, err := startChild(argv, env, cfg.Dir, cfg.Stdout, teeWriter{cfg.Stderr, tail})
	if err != nil {
		return fail(startFailureCode(err), startError(argv[0], err))
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if hold {
		go handOffPort(runCtx, res, prog.done, cfg.PortHandoffTimeout, log)
	}
	refreshing, progress := startWatchers(runCtx, &cfg, client, tokens, start, env, mark, prog, log)
	var asked <-chan string // a process's no-restart request, which the program would not heed
	if launch.RestartsProcesses {
		asked = watchNoRestart(runCtx, start.noRestart, noRestartPoll)
	}
	stopped, signal := supervise(ctx, runCtx, &cfg, client, prog, sigs, asked, log)
	cancel()
	<-refreshing // no rewrite of the token file after the program
	if signal == "" {
		progress.final(ctx) // not when the NodeManager is stopping the container: no time
	}
	return endProgram(ctx, &cfg, client, start, programEnd{prog: prog, mark: mark, tail: tail, stopped: stopped, signal: signal}, log), nil
}

// programEnd is how the program ended, as supervise saw it.
type programEnd struct {
	prog    *child
	mark    string // its processes' mark (markProgramProcesses)
	tail    *tailBuffer
	stopped bool
	signal  string
}

// endProgram does what follows the program's exit: what it left behind is
// ended, its checkpoints and result are saved, and its exit is told to the
// AM. It returns the program's exit code.
func endProgram(ctx context.Context, cfg *Config, client *rendezvous.Client, start programStart, end programEnd, log *logger) int {
	endLeftBehind(cfg, end.mark, end.prog, end.signal, log)
	start.checkpoints.finish(ctx, end.prog.exitCode() == 0 && end.signal == "", log)

	code := end.prog.exitCode()
	sendResult(cfg, client, start.resultFile, log) // before the exit: the AM may end the job on it
	rule, line := cfg.logRules.match()
	var noRestart string
	if code != 0 && !end.stopped && end.signal == "" && rule == "" {
		if noRestart = noRestartReason(start.noRestart, log); noRestart != "" {
			log.printf("the program asked not to be restarted: %s", noRestart)
		}
	}
	report(cfg, client, log, rendezvous.ExitReport{Task: cfg.Task, ContainerID: cfg.ContainerID, ExitCode: code, Stopped: end.stopped, Signal: end.signal,
		StderrTail: end.tail.Lines(), LogRule: rule, LogLine: line, NoRestart: noRestart})
	log.printf("the program exited with code %d", code)
	return code
}

// reservePort reserves the task's port (port, or any when 0). A port re-taken
// from a predecessor may still be held a moment by its closing sockets: that
// is retried, bounded by retakeWait.
func reservePort(ctx context.Context, port int) (*Reservation, error) {
	res, err := ReservePortNumber(port)
	for deadline := time.Now().Add(retakeWait); err != nil && port != 0 && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(250 * time.Millisecond)
		res, err = ReservePortNumber(port)
	}
	return res, err
}

// prepareBeforeRegistering checks the container and prepares what the program
// needs that does not depend on the cluster spec: a task that cannot run fails
// at once, saying why, instead of after the rendezvous.
func prepareBeforeRegistering(ctx context.Context, cfg *Config, log *logger) (pythonDirs, *tokenFile, error) {
	// A NodeManager without YARN's Docker runtime (DefaultContainerExecutor)
	// ignores the image it was asked for: fail rather than run on the host.
	if err := checkInImage(cfg); err != nil {
		return pythonDirs{}, nil, err
	}
	pyDirs, err := preparePython(ctx, cfg)
	if err != nil {
		return pythonDirs{}, nil, err
	}
	// The program's token file is written before registering, so a
	// container that cannot write it fails at once.
	var tokens *tokenFile
	if cfg.Credentials != nil {
		if tokens, err = prepareTokenFile(cfg, log); err != nil {
			return pythonDirs{}, nil, fmt.Errorf("task launcher: %w", err)
		}
	}
	return pyDirs, tokens, nil
}

// serveSideServiceOrReleasePort serves the framework's side service on the reserved port
// (launch.Serve), or releases the port unless it is held for the program
// (hold).
func serveSideServiceOrReleasePort(storeCtx context.Context, launch framework.Launch, hold bool, res *Reservation, host string, log *logger) error {
	if launch.Serve != nil {
		// The side service listens on the reserved socket itself: the port
		// never leaves this process, and outlives the program's processes.
		if err := serveSideService(storeCtx, res, host, launch.Serve, log); err != nil {
			return fmt.Errorf("task launcher: %w", err)
		}
	} else if !hold {
		_ = res.Release()
	}
	return nil
}

// markProgramProcesses marks the program's environment (env) so that what the
// program starts and leaves behind is found by the mark, and makes this
// process the one orphaned processes come to (orphans.go).
func markProgramProcesses(env []string, log *logger) (mark string, marked []string) {
	mark = newLaunchMark()
	marked = setEnv(env, EnvLaunchMark, mark, true)
	if err := becomeSubreaper(); err != nil {
		log.printf("processes the program detaches may outlive it: %v", err)
	}
	return mark, marked
}

// startWatchers starts, for as long as runCtx lasts, what runs beside the
// program: the token refresh (refreshing is closed when it is done, at once
// without tokens), the warnings' watch, and the GPU, progress and process
// samples sent to the AM.
func startWatchers(runCtx context.Context, cfg *Config, client *rendezvous.Client, tokens *tokenFile, start programStart, env []string, mark string, prog *child, log *logger) (refreshing <-chan struct{}, progress *progressReporter) {
	refreshed := make(chan struct{})
	if tokens != nil {
		go func() {
			defer close(refreshed)
			refreshTokens(runCtx, tokens, cfg.Task, client.WaitCredentials, log, tokenRetryFirst, tokenRetryMax)
			if runCtx.Err() == nil {
				// The AM serves no fresh credentials (a job without a
				// keytab): the connection its answer came on is not held
				// idle in the AM's open files for the task's life.
				client.Close()
			}
		}()
	} else {
		close(refreshed)
	}
	go start.checkpoints.watch(runCtx)
	go watchWarnings(runCtx, cfg, client.WaitNotice, start.warnings, func(s syscall.Signal) error {
		start.checkpoints.warned()
		return prog.signal(s)
	}, log)
	go sampleGPUs(runCtx, env, cfg.DockerImage != "", gpuInterval, func(ctx context.Context, gpus []contract.GPUSample) error {
		return client.ReportMetrics(ctx, rendezvous.MetricsReport{Task: cfg.Task, ContainerID: cfg.ContainerID, GPUs: gpus})
	}, log)
	progress = newProgressReporter(start.progressFile, func(ctx context.Context, p contract.Progress) error {
		return client.ReportMetrics(ctx, rendezvous.MetricsReport{Task: cfg.Task, ContainerID: cfg.ContainerID, Progress: &p})
	}, log)
	go progress.run(runCtx, progressInterval)
	go sampleProcesses(runCtx, newTreeSampler(mark, prog.pgid, time.Now()), processFirst, processInterval, func(ctx context.Context, p contract.ProcessSample) error {
		return client.ReportMetrics(ctx, rendezvous.MetricsReport{Task: cfg.Task, ContainerID: cfg.ContainerID, Process: &p})
	}, log)
	return refreshed, progress
}

// endLeftBehind ends what the program left running. Whatever is left in its
// group ends with it; what left the group (setsid, daemons) gets SIGTERM and
// OrphanGrace, but none when the NodeManager is stopping the container
// (signal, the first signal from outside): its SIGKILL of the launcher
// follows within a moment, and would leave them running.
func endLeftBehind(cfg *Config, mark string, prog *child, signal string, log *logger) {
	left := leftBehind(mark, prog.pgid)
	_ = prog.signal(syscall.SIGKILL)
	grace := cfg.OrphanGrace
	if signal != "" {
		grace = 0
	}
	if n := endOrphans(left, mark, grace); n > 0 {
		log.printf("ended %d process(es) the program left running (SIGTERM, then SIGKILL after %s)", n, grace)
	}
}

// programStart is what the program is started with once the cluster spec is known.
type programStart struct {
	launch       framework.Launch
	env          []string
	warnings     *warningFiles  // where the AM's warnings go
	progressFile string         // where the program's progress goes
	resultFile   string         // where the program leaves its result (contract.EnvResultFile)
	noRestart    string         // where it says a restart cannot help (contract.EnvNoRestartFile)
	hookDir      string         // the framework's Python hook, removed after the program; "" for none
	checkpoints  *checkpointRun // nil without --checkpoint
}

// prepareProgram builds the program's command line and environment from the task spec: the
// framework's launch contract, the Python environment, the token, warnings and progress files.
func prepareProgram(cfg *Config, ts rendezvous.TaskSpec, port int, pyDirs pythonDirs, tokens *tokenFile) (programStart, error) {
	command, baseEnv, err := programOf(cfg, ts.Program)
	if err != nil {
		return programStart{}, err
	}
	baseEnv = pyDirs.environ(baseEnv)
	launch, err := launchOf(cfg.Task, ts.Cluster, port, command, baseEnv)
	if err != nil {
		return programStart{}, fmt.Errorf("task launcher: %w", err)
	}
	// The token went to the framework, which puts it where its program
	// needs it (XGBoost's DMLC_TASK_ID), if anywhere.
	baseEnv = unsetEnv(slices.Clone(baseEnv), contract.EnvJobServiceToken)
	start := programStart{launch: launch, env: childEnv(baseEnv, launch, port)}
	if launch.PythonHook != "" {
		if start.hookDir, err = writePythonHook(cfg.Dir, launch.PythonHook); err != nil {
			return programStart{}, fmt.Errorf("task launcher: %w", err)
		}
		start.env = prependPath(start.env, "PYTHONPATH", start.hookDir)
	}
	failed := func(err error) (programStart, error) {
		if start.hookDir != "" {
			os.RemoveAll(start.hookDir)
		}
		return programStart{}, fmt.Errorf("task launcher: %w", err)
	}
	if tokens != nil {
		start.env = setEnv(start.env, contract.EnvTokenFile, tokens.path, true)
	}
	if start.warnings, err = newWarningFiles(cfg); err != nil {
		return failed(err)
	}
	start.env = setEnv(start.env, contract.EnvPreemptionFile, start.warnings.preemption, true)
	start.env = setEnv(start.env, contract.EnvWarningsFile, start.warnings.all, true)
	if start.progressFile, err = progressFilePath(cfg); err != nil {
		return failed(err)
	}
	start.env = setEnv(start.env, contract.EnvProgressFile, start.progressFile, true)
	if start.resultFile, err = resultFilePath(cfg); err != nil {
		return failed(err)
	}
	start.env = setEnv(start.env, contract.EnvResultFile, start.resultFile, true)
	if start.noRestart, err = noRestartFilePath(cfg); err != nil {
		return failed(err)
	}
	start.env = setEnv(start.env, contract.EnvNoRestartFile, start.noRestart, true)
	return start, nil
}

// programOf is what the launcher runs: Config.Command when it was given
// one (--local), else the program the AM sent with the spec, whose
// environment variables are set over the launcher's own environment.
func programOf(cfg *Config, p *rendezvous.Program) (command, env []string, err error) {
	if len(cfg.Command) > 0 {
		return cfg.Command, cfg.Env, nil
	}
	if p == nil {
		return nil, nil, errors.New("task launcher: the AM sent no program to run (client and AM binaries differ?)")
	}
	env = append([]string(nil), cfg.Env...)
	names := make([]string, 0, len(p.Env))
	for k := range p.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		env = setEnv(env, k, p.Env[k], !contract.SetForTasks(k))
	}
	return p.Argv, env, nil
}

// prepareTokenFile writes the program's token file, then scrubs the
// rendezvous secret from the NodeManager's.
func prepareTokenFile(cfg *Config, log *logger) (*tokenFile, error) {
	path, err := tokenFilePath(cfg)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	f, err := writeTokenFile(path, cfg.Credentials)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	f.onChange = cfg.OnFreshCredentials
	if src := cfg.ScrubTokenFile; src != "" {
		if abs, err := filepath.Abs(src); err != nil || abs != path {
			if err := writeFileAtomic(src, f.data); err != nil {
				log.printf("could not remove the rendezvous secret from the container's token file: %v", err)
			}
		}
	}
	return f, nil
}

// meet registers and waits for the cluster spec, giving up at the
// rendezvous deadline or when a signal says the container is being
// stopped.
func meet(ctx context.Context, cfg *Config, client *rendezvous.Client, reg rendezvous.Registration, sigs <-chan os.Signal) (rendezvous.TaskSpec, os.Signal, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.RendezvousTimeout)
	defer cancel()
	type result struct {
		spec rendezvous.TaskSpec
		err  error
	}
	done := make(chan result, 1)
	go func() {
		if err := client.Register(ctx, reg); err != nil {
			done <- result{err: err}
			return
		}
		spec, err := client.WaitTaskSpec(ctx, reg.Task)
		done <- result{spec, err}
	}()
	select {
	case r := <-done:
		if errors.Is(r.err, context.DeadlineExceeded) && ctx.Err() != nil {
			return rendezvous.TaskSpec{}, nil, fmt.Errorf("no cluster spec within %s: %w", cfg.RendezvousTimeout, r.err)
		}
		return r.spec, nil, r.err
	case sig := <-sigs:
		cancel()
		<-done
		return rendezvous.TaskSpec{}, sig, nil
	}
}

// signalSettle is how long a cancelled launcher waits for the signal that
// cancelled it to arrive on its own channel.
const signalSettle = 100 * time.Millisecond

// supervise waits for the program to end, forwarding signals and carrying
// out the AM's stop order, the caller's cancellation, a --fail-on-log
// match or a process's no-restart request (asked, nil when not watched) as
// SIGTERM, then SIGKILL after the grace period. It reports whether the AM
// stopped the program, and the first signal that came from outside (the
// NodeManager), if any.
func supervise(ctx, runCtx context.Context, cfg *Config, client *rendezvous.Client, prog *child, sigs <-chan os.Signal, asked <-chan string, log *logger) (stopped bool, signal string) {
	orders := make(chan rendezvous.StopOrder, 1)
	go func() {
		o, err := client.WaitStop(runCtx, cfg.Task, cfg.ContainerID)
		if err != nil {
			if runCtx.Err() == nil {
				log.printf("no longer listening for the AM's stop order: %v", err)
			}
			return
		}
		orders <- o
	}()
	var kill <-chan time.Time
	terminate := func(why string, byAM bool) {
		stopped = stopped || byAM
		log.printf("%s: sending SIGTERM to the program, SIGKILL in %s", why, cfg.ProgramStopGrace)
		_ = prog.signal(syscall.SIGTERM)
		if kill == nil {
			kill = time.After(cfg.ProgramStopGrace)
		}
	}
	forward := func(sig os.Signal) {
		log.printf("forwarding %s to the program", describeSignal(sig))
		if signal == "" {
			signal = describeSignal(sig)
		}
		if s, ok := sig.(syscall.Signal); ok {
			_ = prog.signal(s)
		}
	}
	cancelled := ctx.Done()
	matched := cfg.logRules.matched()
	for {
		select {
		case <-prog.done:
			return stopped, signal
		case <-matched:
			matched = nil
			rule, line := cfg.logRules.match()
			terminate(fmt.Sprintf("its stderr line %q matches --%s", line, rule), false)
		case reason := <-asked:
			asked = nil
			terminate("a process asked not to be restarted ("+reason+"), and the program restarts its processes", false)
		case sig := <-sigs:
			forward(sig)
		case o := <-orders:
			terminate("the AM stops this task ("+o.Reason+")", true)
		case <-cancelled:
			cancelled = nil
			// `tfyarn task`'s context ends on SIGTERM too (main's
			// NotifyContext): the NodeManager's kill (a preemption, a
			// memory limit) then arrives on sigs as well, and must be
			// told as a kill from outside, not as the program's own exit.
			select {
			case sig := <-sigs:
				forward(sig)
				continue
			case <-time.After(signalSettle):
			}
			terminate("the launcher was cancelled", false)
		case <-kill:
			log.printf("the program outlived its %s grace period: SIGKILL", cfg.ProgramStopGrace)
			_ = prog.signal(syscall.SIGKILL)
		}
	}
}

// report tells the AM how the program ended, best effort within
// ReportTimeout.
func report(cfg *Config, client *rendezvous.Client, log *logger, e rendezvous.ExitReport) {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ReportTimeout)
	defer cancel()
	if err := client.ReportExit(ctx, e); err != nil {
		log.printf("could not report the exit to the AM: %v", err)
	}
}

// checkInImage fails a task asked to run in a Docker image that does not
// run in a container of its own: YARN's Docker runtime starts the launch
// script as the container's PID 1 (or under Docker's init), which execs
// the launcher or its bash, while on a node's host PID 1 is the machine's
// init and the launcher descends from the NodeManager.
func checkInImage(cfg *Config) error {
	if cfg.DockerImage == "" {
		return nil
	}
	pids := cfg.PIDs
	if pids == nil {
		pids = func() [2]int { return [2]int{os.Getpid(), os.Getppid()} }
	}
	if p := pids(); p[0] == 1 || p[1] == 1 {
		return nil // the launcher, or the bash that runs it, is the namespace's init
	}
	read := cfg.InitCmdline
	if read == nil {
		read = func() ([]byte, error) { return os.ReadFile("/proc/1/cmdline") }
	}
	b, err := read()
	if err == nil {
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		switch filepath.Base(args[0]) {
		case "docker-init", "tini", "tini-static":
			return nil
		}
		for _, a := range args {
			if filepath.Base(a) == "launch_container.sh" {
				return nil
			}
		}
	}
	return fmt.Errorf("task launcher: the job asked for image %s, but this task does not run in a container of its own (PID 1 is not YARN's launch script): the NodeManager ignored YARN's Docker runtime; run the job on NodeManagers with LinuxContainerExecutor and the docker runtime allowed, or without --image", cfg.DockerImage)
}
