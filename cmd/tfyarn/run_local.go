package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/tfyarn/tfyarn/localrun"
	"github.com/tfyarn/tfyarn/taskspec"
	"github.com/urfave/cli/v2"
)

// localAppID stands for the application id in a local run's output: there
// is no YARN application.
const localAppID = "local"

// yarnOnlyFlags mean nothing to a local run; --local ignores them, saying
// so when the user set one.
var yarnOnlyFlags = []string{"queue", "name", "tag", "am-memory", "am-vcores", "node-label", "conf-dir", "timeout"}

// runLocalAction is `tfyarn run --local`: job's tasks as processes on this
// machine (package localrun), with the YARN path's output, JSON and exit
// codes. Nothing here reads the Hadoop configuration or dials a cluster.
func runLocalAction(c *cli.Context, e *env, job client.Job, out string) error {
	var ignored []string
	for _, f := range yarnOnlyFlags {
		if c.IsSet(f) {
			ignored = append(ignored, "--"+f)
		}
	}
	if len(ignored) > 0 {
		fmt.Fprintf(e.stderr, "tfyarn: note: --local ignores %s (YARN only)\n", strings.Join(ignored, ", "))
	}
	if err := checkLocalScript(job.Script); err != nil {
		return err
	}
	opts := localrun.Options{
		Stdout:  e.stdout,
		Stderr:  e.stderr,
		Python:  job.Python,
		Success: job.Success,
	}
	if c.IsSet("rendezvous-timeout") {
		opts.RegistrationTimeout = job.RendezvousTimeout
	}
	progress := e.stdout
	if out == outputJSON {
		// stdout holds one JSON document: the tasks' output goes to stderr,
		// which both of localrun's streams then share.
		w := &lockedWriter{w: e.stderr}
		opts.Stdout, opts.Stderr, progress = w, w, e.stderr
	}
	// The task programs run in their own process groups, so a Ctrl-C on the
	// terminal reaches only tfyarn, which stops every task through ctx.
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	lr, err := localrun.Run(ctx, job.Job, opts)
	if err != nil {
		return err
	}
	res := localResult(lr)
	if out == outputJSON {
		if err := cliout.JSON(e.stdout, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(progress, "%s %s %s: %s\n", res.AppID, res.State, res.FinalStatus, res.Diagnostics)
	}
	if !res.Succeeded() {
		return &client.JobError{Result: res}
	}
	return nil
}

// checkLocalScript refuses, before any task starts, a script that is not
// there: every task would fail with the same error.
func checkLocalScript(script string) error {
	if script == "" {
		return nil
	}
	st, err := os.Stat(script)
	if err != nil {
		return &taskspec.ValidationError{Message: fmt.Sprintf("script %s: %v", script, errors.Unwrap(err))}
	}
	if !st.Mode().IsRegular() {
		return &taskspec.ValidationError{Message: fmt.Sprintf("script %s is not a regular file", script)}
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
		Tasks:       make([]client.TaskResult, 0, len(lr.Tasks)),
	}
	if lr.Status == localrun.StatusKilled {
		res.State = "KILLED"
	}
	for _, t := range lr.Tasks {
		code := int32(t.ExitCode)
		tr := client.TaskResult{
			Task:     t.Task.String(),
			Type:     string(t.Task.Type),
			Index:    t.Task.Index,
			ExitCode: &code,
			Failure:  t.Failure,
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
