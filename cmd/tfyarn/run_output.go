package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/jobreport"
	"github.com/tfyarn/tfyarn/taskspec"
	"github.com/urfave/cli/v2"
)

// Which tasks' output run shows (--logs).
const (
	logsDecider = "decider"
	logsAll     = "all"
	logsNone    = "none"
)

func logsFlag() cli.Flag {
	return &cli.StringFlag{Name: "logs", Value: logsDecider, Usage: "whose output run shows while the job runs, each line prefixed with its task (e.g. [chief:0]): " +
		"`decider` (chief:0, or worker:0 without a chief), all, or none; read from the NodeManagers, stdout lines on stdout (on stderr with --output json), stderr lines on stderr"}
}

func logsMode(c *cli.Context) (string, error) {
	switch m := c.String("logs"); m {
	case logsDecider, logsAll, logsNone:
		return m, nil
	default:
		return "", usagef("--logs %q: expected decider, all or none", m)
	}
}

// decider is the task whose output --logs decider shows: the one whose
// end decides a SuccessChief job (tensorflow.ChiefPolicy), chief:0, or worker:0
// without a chief; worker:0, rank 0's container, for other jobs.
func decider(job taskspec.Job) string {
	for _, g := range job.Tasks {
		if g.Type == taskspec.Chief {
			return "chief:0"
		}
	}
	return "worker:0"
}

// runLogs shows the chosen tasks' output while run waits.
type runLogs struct {
	mode, decider string
	logs          *client.TaskLogs
	warned        bool
	warn          io.Writer
}

// newRunLogsFor starts following for mode; task stdout goes to stdout, or to
// stderr when stdout holds the JSON result.
func newRunLogsFor(ctx context.Context, s *client.Submission, deciderTask, mode, out string, e *env) *runLogs {
	r := &runLogs{mode: mode, decider: deciderTask, warn: e.stderr}
	if mode == logsNone {
		return r
	}
	stdout := e.stdout
	if out == outputJSON {
		stdout = e.stderr
	}
	output := client.PrefixedOutput(stdout, e.stderr)
	if out == outputEvents {
		output = e.events.logOutput()
	}
	r.logs = s.FollowTaskLogs(ctx, output,
		func(note string) { fmt.Fprintf(e.stderr, "%s: %s\n", s.AppID, note) }, 0)
	return r
}

// event starts following a chosen task when it gets a container and reads
// its last lines when it ends (before run prints the job's end).
func (r *runLogs) event(ctx context.Context, ev client.Event) {
	if r.logs == nil || ev.Task == nil || (r.mode == logsDecider && ev.Task.Task != r.decider) {
		return
	}
	switch ev.TaskChange {
	case jobreport.TaskLaunched:
		if err := r.logs.Add(ctx, *ev.Task); err != nil && !r.warned {
			r.warned = true
			fmt.Fprintf(r.warn, "%s: cannot show %s's output: %v\n", ev.AppID, ev.Task.Task, err)
		}
	case jobreport.TaskEnded:
		r.logs.Finish(ctx, *ev.Task)
	}
}

// close stops following and flushes partial lines.
func (r *runLogs) close() {
	if r.logs != nil {
		r.logs.Close()
		r.logs = nil
	}
}
