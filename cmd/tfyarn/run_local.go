package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/tfyarn/tfyarn/internal/localrun"
	"github.com/tfyarn/tfyarn/internal/shipplan"
	"github.com/tfyarn/tfyarn/jobreport"
	"github.com/urfave/cli/v2"
)

// localAppID stands for the application id in a local run's output: there
// is no YARN application.
const localAppID = "local"

// yarnOnlyFlags mean nothing to a local run; --local ignores them, saying
// so when the user set one.
var yarnOnlyFlags = []string{"queue", "name", "tag", "am-memory", "am-vcores", "node-label", "spread", "colocate", "apart", "am-node-label", "alloc-timeout", "priority", "am-attempts", "cache-dir", "conf-dir", "timeout", "checkpoint", "checkpoint-keep", "checkpoint-fresh"}

// runLocalAction is `tfyarn run --local`: job's tasks as processes on this
// machine (package localrun), with the YARN path's output, JSON and exit
// codes. Nothing here reads the Hadoop configuration or dials a cluster.
func runLocalAction(c *cli.Context, e *env, job client.Job, out string) error {
	var ignored []string
	for _, f := range yarnOnlyFlags {
		// Every level: run's --timeout (lifetime) shadows the global one.
		for _, l := range c.Lineage() {
			if l.IsSet(f) {
				ignored = append(ignored, "--"+f)
				break
			}
		}
	}
	if len(ignored) > 0 {
		fmt.Fprintf(e.stderr, "tfyarn: note: --local ignores %s (YARN only)\n", strings.Join(ignored, ", "))
	}
	if err := shipplan.CheckScriptFile(job.Script); err != nil {
		return err
	}
	opts := localrun.Options{
		Stdout:  e.stdout,
		Stderr:  e.stderr,
		Python:  job.Python,
		Success: job.Success,
	}
	cleanup, err := localShipping(c.Context, &job, &opts)
	if err != nil {
		return err
	}
	defer cleanup()
	if c.IsSet("rendezvous-timeout") {
		opts.RegistrationTimeout = job.RendezvousTimeout
	}
	progress := e.stdout
	switch out {
	case outputJSON:
		// stdout holds one JSON document: the tasks' output goes to stderr,
		// which both of localrun's streams then share.
		w := &lockedWriter{w: e.stderr}
		opts.Stdout, opts.Stderr, progress = w, w, e.stderr
	case outputEvents:
		// stdout holds the events: the tasks' lines become log events, the run's own lines go to
		// stderr.
		human := &lockedWriter{w: e.stderr}
		opts.Stdout = &localLogLines{s: e.events, stream: "stdout", human: human}
		opts.Stderr = &localLogLines{s: e.events, stream: "stderr", human: human}
		progress = e.stderr
	}
	// The task programs run in their own process groups, so a Ctrl-C on the
	// terminal reaches only tfyarn, which stops every task through ctx.
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Locally no launch context or log sits between the client and the
	// tasks: the secret environment is theirs as is.
	if err := shipplan.CheckSecretEnv(job.Env, job.SecretEnv); err != nil {
		return err
	}
	if len(job.SecretEnv) > 0 {
		env := make(map[string]string, len(job.Env)+len(job.SecretEnv))
		for k, v := range job.Env {
			env[k] = v
		}
		for k, v := range job.SecretEnv {
			env[k] = v
		}
		job.Env = env
	}
	lr, err := localrun.Run(ctx, job.Job, opts)
	if err != nil {
		return err
	}
	res := localResult(lr)
	switch out {
	case outputEvents:
		e.events.write(encodeResult(res, time.Now()))
	case outputJSON:
		if err := cliout.JSON(e.stdout, res); err != nil {
			return err
		}
	default:
		fmt.Fprintf(progress, "%s %s %s: %s\n", res.AppID, res.State, res.FinalStatus, res.Diagnostics)
		sayAndRemoveResults(progress, res)
	}
	if !res.Succeeded() {
		return &client.JobError{Result: res}
	}
	return nil
}

// localResult is a local run's outcome in the YARN path's shape (what
// `--output json` prints): state FINISHED or KILLED like an application's,
// no tracking URL, nothing uploaded.
func localResult(lr *localrun.Result) *client.Result {
	res := &client.Result{
		AppID:       localAppID,
		FinalStatus: string(lr.Status),
		State:       "FINISHED",
		Diagnostics: lr.Diagnostics,
		Tasks:       make([]jobreport.Task, 0, len(lr.Tasks)),
		Restarts:    lr.Restarts,
		ResultFiles: lr.ResultFiles,
	}
	if lr.Status == localrun.StatusKilled {
		res.State = "KILLED"
	}
	for _, t := range lr.Tasks {
		code := int32(t.ExitCode)
		tr := jobreport.Task{
			Task:     t.Task.String(),
			Type:     string(t.Task.Type),
			Index:    t.Task.Index,
			ExitCode: &code,
			Failure:  t.Failure,
			Attempt:  t.Attempt,
			Restarts: t.Attempt,
		}
		switch {
		case t.Stopped:
			tr.State = "stopped"
		case t.ExitCode == 0:
			tr.State = "succeeded"
		default:
			tr.State = "failed"
		}
		if host, port, err := net.SplitHostPort(t.Addr); err == nil {
			tr.Host = host
			tr.Port, _ = strconv.Atoi(port)
		}
		res.Tasks = append(res.Tasks, tr)
	}
	return res
}

// lockedWriter serializes writes from localrun's two output streams when
// they go to one writer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// localShipping is --env, --src-dir, --files and --archives for a local
// run: the job's shipping plan, the one a YARN run ships, laid out on this
// machine by localrun.Stage (nothing is packed or copied).
//
//   - --env DIR: the tasks run DIR's interpreter (bin/python, or --python
//     inside DIR as on YARN) with DIR/bin first on PATH and VIRTUAL_ENV or
//     CONDA_PREFIX set; an archive is refused (unpack it, or use YARN).
//   - --src-dir DIR: DIR goes first on PYTHONPATH.
//   - --files and --archives: the tasks run in a temporary directory that
//     holds a symbolic link to each file under its name, each archive
//     unpacked under its name, and links named src and env to --src-dir and
//     --env, as in a container; the script is run from where it is. Without
//     them the tasks run in the current directory, as before.
//
// It returns a function that removes the temporary directory.
func localShipping(ctx context.Context, job *client.Job, opts *localrun.Options) (func(), error) {
	nothing := func() {}
	plan, err := shipplan.Make(shipInputs(*job))
	if err != nil {
		return nothing, err
	}
	if job.PythonEnv != "" {
		if st, _ := os.Stat(job.PythonEnv); st == nil || !st.IsDir() {
			return nothing, usagef("--local --env %s: give the environment's directory (archives are unpacked by YARN only)", job.PythonEnv)
		}
	}
	staged, err := localrun.Stage(ctx, plan)
	if err != nil {
		return nothing, err
	}
	staged.Apply(&job.Job, opts)
	return staged.Cleanup, nil
}

// shipInputs is what job ships, in the shipping plan's terms: the plan
// client makes of the same job for YARN.
func shipInputs(job client.Job) shipplan.Inputs {
	in := shipplan.Inputs{Script: job.Script, Args: job.Args, Python: job.Python, PythonEnv: job.PythonEnv, SrcDir: job.SrcDir, Env: job.Env}
	for _, f := range job.Files {
		in.Files = append(in.Files, shipplan.LocalFile(f))
	}
	for _, a := range job.Archives {
		in.Archives = append(in.Archives, shipplan.LocalFile(a))
	}
	return in
}

// sayAndRemoveResults: the table output names no file, since no caller fetches one; each task's
// result is said by its size and the run's result directory removed. (--output json and events
// leave the files to the caller, who removes their directory.)
func sayAndRemoveResults(progress io.Writer, res *client.Result) {
	for _, t := range res.Tasks {
		p, ok := res.ResultFiles[t.Task]
		if !ok {
			continue
		}
		if st, err := os.Stat(p); err == nil {
			fmt.Fprintf(progress, "%s result of %s: %d bytes (removed; --output json keeps it)\n", res.AppID, t.Task, st.Size())
		}
	}
	for _, p := range res.ResultFiles {
		os.RemoveAll(filepath.Dir(p)) // one directory holds them all: removed once, then gone
	}
}
