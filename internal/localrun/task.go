package localrun

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/executor"
	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/tasklogs/prefix"
	"github.com/tfyarn/tfyarn/taskspec"
)

// processes runs the tasks' launchers in this process, each program a
// child process: the driver's procs.
type processes struct {
	board          *rendezvous.Board
	secret         []byte // the run's; each launcher gets its container's key
	serviceKey     []byte // the job service's, nil for none; each launcher gets its task's token
	log            *prefix.Writer
	ctx            context.Context
	stdout, stderr *prefix.Sink
	job            taskspec.Job
	appID          string
	base           executor.Config
	env            []string
	running        map[string]*process // by container
	errs           map[taskspec.TaskID]string
	ends           chan ended
}

// process is one launcher run of a task.
type process struct {
	task   taskspec.TaskID
	cancel context.CancelFunc
}

// ended is what a launcher goroutine hands back.
type ended struct {
	container string
	code      int
	err       error
	noRestart string // the program's reason a restart cannot help (its exit report's)
}

// diagnostics is the end as the core's ContainerCompleted carries it.
func (e ended) diagnostics() string {
	if e.err != nil {
		return "the launcher failed: " + e.err.Error()
	}
	return "the program exited with code " + strconv.Itoa(e.code)
}

func (p *processes) start(ln core.Launch) {
	ctx, cancel := context.WithCancel(p.ctx)
	p.running[ln.Container.ID] = &process{task: ln.Task, cancel: cancel}
	cfg := p.base
	cfg.Task = ln.Task
	cfg.ContainerID = ln.Container.ID
	cfg.Secret = rendezvous.ContainerKey(p.secret, ln.Container.ID)
	cfg.Port = ln.Port
	cfg.Env = taskEnv(p.env, p.job, p.appID, ln)
	if p.serviceKey != nil {
		cfg.Env = append(cfg.Env, contract.EnvJobServiceToken+"="+framework.JobServiceToken(p.serviceKey, ln.Task))
	}
	stdout := prefix.NewWriter(p.stdout, "["+ln.Task.String()+"] ")
	stderr := prefix.NewWriter(p.stderr, "["+ln.Task.String()+"] ")
	cfg.Stdout, cfg.Stderr = stdout, stderr
	// The launchers share this process: none may subscribe to SIGINT or
	// SIGTERM itself, or one Ctrl-C would go to a single task. The
	// caller's context carries the interrupt to all of them instead.
	cfg.Signals = make(chan os.Signal)
	// Only this container may register as the task (a restart's new one
	// replaces the old).
	p.board.Assign(ln.Task, ln.Container.ID)
	go func() {
		code, err := executor.Run(ctx, cfg)
		stdout.Flush()
		stderr.Flush()
		e := ended{container: ln.Container.ID, code: code, err: err}
		if rep, ok := p.board.Exit(ln.Task); ok && rep.ContainerID == ln.Container.ID {
			e.noRestart = rep.NoRestart
		}
		p.ends <- e
	}()
}

func (p *processes) stop(s core.Stop) {
	p.logf("asking %s to end: %s", s.Task, s.Reason)
	p.board.Stop(s.Task, s.Reason)
}

func (p *processes) kill(s core.Stop) {
	if pr := p.running[s.Container.ID]; pr != nil {
		if !strings.HasPrefix(s.Reason, "the job is ") {
			p.logf("stopping %s: %s", s.Task, s.Reason)
		}
		pr.cancel()
	}
}

func (p *processes) over(f core.Finish) {
	first, _, _ := strings.Cut(f.Diagnostics, "\n")
	p.logf("job %s (%s)", f.Status, first)
	// Tasks still waiting for the spec learn the rendezvous is off;
	// running ones get the stop order.
	p.board.StopAll("the job is " + f.Status.String())
	p.board.Fail(fmt.Errorf("the job is over: %s", first))
}

func (p *processes) restart(r core.Restart) {
	p.logf("restarting the cluster (restart %d): a new rendezvous", r.Number)
	p.board.Reset()
}

func (p *processes) logf(format string, args ...any) {
	fmt.Fprintf(p.log, format+"\n", args...)
}

// argv is the program every task runs: Command, or Script under the
// configured Python, followed by Args (placeholders are the executor's).
func argv(job taskspec.Job, opts Options) ([]string, error) {
	switch {
	case job.Script != "" && job.Command != "":
		return nil, fmt.Errorf("localrun: the job has both a command (%q) and a script (%q); give one", job.Command, job.Script)
	case job.Script != "":
		return append([]string{opts.Python, job.Script}, job.Args...), nil
	case job.Command != "":
		return append([]string{job.Command}, job.Args...), nil
	}
	return nil, fmt.Errorf("localrun: the job has no command and no script")
}

// taskEnv is the base environment plus the job's variables and the task's
// identity; the executor adds TF_CONFIG and the port.
func taskEnv(base []string, job taskspec.Job, appID string, ln core.Launch) []string {
	env := append([]string(nil), base...)
	keys := make([]string, 0, len(job.Env))
	for k := range job.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	set := func(k, v string) {
		prefix := k + "="
		out := env[:0]
		for _, kv := range env {
			if !strings.HasPrefix(kv, prefix) {
				out = append(out, kv)
			}
		}
		env = append(out, prefix+v)
	}
	for _, k := range keys {
		set(k, job.Env[k])
	}
	id := ln.Task
	set(contract.EnvTask, id.String())
	set(contract.EnvTaskType, string(id.Type))
	set(contract.EnvTaskIndex, strconv.Itoa(id.Index))
	set(contract.EnvTaskAttempt, strconv.Itoa(ln.Attempt))
	set(contract.EnvRestart, strconv.Itoa(ln.Restart))
	set(contract.EnvAppID, appID)
	if job.Framework != "" {
		set(contract.EnvFramework, job.Framework)
	}
	if job.ProcsPerNode > 0 {
		set(contract.EnvProcsPerNode, strconv.Itoa(job.ProcsPerNode))
	}
	if job.MinWorkers > 0 {
		set(contract.EnvMinWorkers, strconv.Itoa(job.MinWorkers))
	}
	if s := int(job.ElasticLastCall / time.Second); s > 0 {
		set(contract.EnvElasticLastCall, strconv.Itoa(s))
	}
	return env
}
