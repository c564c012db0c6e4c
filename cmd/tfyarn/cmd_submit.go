package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/cliout"
	"github.com/urfave/cli/v2"
)

func submitCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "submit",
		Usage:     "submit a job as run does and return once YARN accepted it, printing its application id",
		ArgsUsage: "SCRIPT.py [-- ARGS...] | -- COMMAND [ARGS...]",
		UsageText: "tfyarn submit --worker SPEC [run's options] SCRIPT.py [-- ARGS...]\n" +
			"   tfyarn submit --worker SPEC [run's options] -- COMMAND [ARGS...]\n\n" +
			"   app=$(tfyarn submit --worker 2x1c,2g train.py) && tfyarn wait \"$app\"",
		Description: "submit takes run's flags and checks, ships and submits the job as run does (see tfyarn run --help),\n" +
			"then prints the application id on stdout and exits 0 once the ResourceManager accepted it; the job\n" +
			"goes on without it. Follow it with tfyarn wait APP_ID, status, logs, kill; its tasks' results with\n" +
			"tfyarn result. --local is refused (a local run ends with its process: use run --local).\n" +
			"JSON (--output json): {app_id, name, queue, user, uploaded_bytes}.\n" +
			"Exit codes: 0 submitted, 2 usage, validation or cluster error (nothing submitted).",
		Flags:        runFlags(),
		OnUsageError: onUsageError,
		Action:       func(c *cli.Context) error { return submitAction(c, e) },
	}
}

func waitCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "wait",
		Usage:     "follow a submitted application until it ends, as run does after submitting",
		ArgsUsage: "APP_ID",
		UsageText: "tfyarn wait APP_ID [--logs decider|all|none] [--output json]\n\n" +
			"   tfyarn wait application_1700000000000_0001 --logs none --output json",
		Description: "wait follows the application as run does once it submitted: the same lines on stderr, the same\n" +
			"--logs, the same JSON result (--output json) and exit codes. An application that ended already\n" +
			"gives its result at once, its tasks from its history. Interrupting wait kills the application, as\n" +
			"interrupting run does.\n" +
			"Exit codes: 0 succeeded, 1 failed or killed, 2 usage or cluster error.",
		Flags:        []cli.Flag{streamOutputFlag(), logsFlag()},
		OnUsageError: onUsageError,
		Action:       func(c *cli.Context) error { return waitAction(c, e) },
	}
}

// submitted is what submit prints with --output json.
type submitted struct {
	AppID         string `json:"app_id"`
	Name          string `json:"name"`
	Queue         string `json:"queue"`
	User          string `json:"user"`
	UploadedBytes int64  `json:"uploaded_bytes"`
}

func submitAction(c *cli.Context, e *env) error {
	req, err := prepareRun(c, false)
	if err != nil {
		return err
	}
	job := req.job
	cl, s, err := connectAndSubmit(c, e, job)
	if err != nil {
		return err
	}
	defer cl.Close()
	defer s.Close()
	switch req.out {
	case outputJSON:
		user, _ := cl.User()
		return cliout.JSON(e.stdout, submitted{AppID: s.AppID, Name: job.Name, Queue: job.Queue, User: user, UploadedBytes: s.UploadedBytes})
	case outputEvents:
		e.events.write(submittedOf(c.Context, cl, s, job))
		return nil
	}
	fmt.Fprintln(e.stdout, s.AppID)
	return nil
}

// submittedOf is the "submitted" event of s: the tracking URL from the ResourceManager's report
// when it answers at once ("" otherwise: the "state" events carry it).
func submittedOf(ctx context.Context, cl *client.Client, s *client.Submission, job client.Job) submittedEvent {
	user, _ := cl.User()
	ev := submittedEvent{eventHeader: header("submitted", s.SubmittedAt), AppID: s.AppID, Name: job.Name, Queue: job.Queue, User: user}
	if app, err := cl.Application(ctx, s.AppID); err == nil {
		ev.TrackingURL = app.TrackingURL
	}
	return ev
}

// submitJob submits job as run and submit do, saying so on stderr.
func submitJob(c *cli.Context, e *env, cl *client.Client, job client.Job) (*client.Submission, error) {
	job.FileSystems = c.StringSlice("file-systems")
	s, err := cl.Submit(c.Context, job, submitCallbacks(e, e.stderr))
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(e.stderr, "%s submitted (uploaded %d bytes)\n", s.AppID, s.UploadedBytes)
	if s.MLflowRunID != "" {
		fmt.Fprintf(e.stderr, "%s MLflow run %s (experiment %s)\n", s.AppID, s.MLflowRunID, s.MLflowExperimentID)
	}
	for _, o := range s.OrphansRemoved {
		fmt.Fprintf(e.stderr, "removed the staging directory %s of %s (%s)\n", o.Path, o.AppID, o.State)
	}
	return s, nil
}

func waitAction(c *cli.Context, e *env) error {
	id, err := oneAppID(c)
	if err != nil {
		return err
	}
	out, err := streamOutputFormat(c)
	if err != nil {
		return err
	}
	mode, err := logsMode(c)
	if err != nil {
		return err
	}
	cl, err := connectForRun(c, e)
	if err != nil {
		return err
	}
	defer cl.Close()
	s, err := cl.Attach(c.Context, id)
	if err != nil {
		return err
	}
	return waitJob(c.Context, e, cl, s, waitDecider(c.Context, cl, id), mode, out)
}

// waitDecider is the decider of an application submitted earlier, from its AM's report of the
// job's task groups: chief:0 when it has a chief, else worker:0.
func waitDecider(ctx context.Context, cl *client.Client, id string) string {
	if st, err := cl.Status(ctx, id); err == nil && st.Live != nil && st.Live.Job != nil {
		for _, g := range st.Live.Job.Groups {
			if g.Type == "chief" {
				return "chief:0"
			}
		}
	}
	return "worker:0"
}

// waitJob follows the submitted application until it ends, as run and wait do: events and the
// decider's (or every task's) output while it runs, then its result. Progress and status lines go
// to stderr: stdout holds the job's output (the tasks' lines --logs shows) or the JSON result.
func waitJob(ctx context.Context, e *env, cl *client.Client, s *client.Submission, deciderTask, mode, out string) error {
	progress := e.stderr
	live := newRunLogsFor(ctx, s, deciderTask, mode, out, e)
	defer live.close()
	res, err := s.Wait(ctx, func(ev client.Event) {
		printRunEvent(ctx, e, progress, live, ev)
		if out == outputEvents {
			e.events.write(encodeEvent(ev)...)
		}
	})
	live.close()
	if res != nil && len(res.Tasks) == 0 && res.State != "" {
		// An application that had ended before wait: its tasks are in its history.
		if st, serr := cl.Status(ctx, s.AppID); serr == nil && st.History != nil {
			res.Tasks, res.Restarts = st.History.Tasks, st.History.Restarts
		}
	}
	if res != nil {
		var je *client.JobError
		switch out {
		case outputEvents:
			// A cluster error (exit 2) ends the stream with its "error" line instead.
			if err == nil || errors.As(err, &je) || errors.Is(err, context.Canceled) {
				e.events.write(encodeResult(res, time.Now()))
			}
		case outputJSON:
			if jerr := cliout.JSON(e.stdout, res); jerr != nil {
				return jerr
			}
		default:
			fmt.Fprintf(progress, "%s %s %s: %s\n", res.AppID, res.State, res.FinalStatus, res.Diagnostics)
		}
	}
	if errors.Is(err, context.Canceled) && res != nil && res.State == "KILLED" {
		return &client.JobError{Result: res}
	}
	return err
}
