package client

import (
	"context"

	"github.com/tfyarn/tfyarn/jobreport"
)

// Event is a change in the application's report that Wait observed
// (jobreport.Event, its one definition; jobreport.TaskLaunched and the
// others name its task changes).
type Event = jobreport.Event

// Result is how an application ended (jobreport.Result, its one definition).
type Result = jobreport.Result

// Wait polls the application's report until it ends, calling onEvent (if
// not nil) on every change of state or tracking URL, and returns how it
// ended; a job that did not succeed also returns a *JobError. When ctx ends
// first, Wait kills the application and returns its final report with
// ctx's error. Either way the staging directory is removed. The work is
// internal/follow's.
func (s *Submission) Wait(ctx context.Context, onEvent func(Event)) (*Result, error) {
	res, err := s.follow.Wait(ctx, onEvent)
	// The AM logs the job's end into its MLflow run; one it could not
	// (killed, lost) leaves that to whoever sees the end: the submitter (an
	// attached Submission, tfyarn wait, holds no MLflow run).
	if s.sub != nil {
		if line := s.sub.FinishTracking(ctx, res); line != "" && s.onNotice != nil {
			s.onNotice(line)
		}
	}
	if err == nil && !res.Succeeded() {
		return res, &JobError{Result: res}
	}
	return res, err
}

// Kill asks the RM to kill the application and waits until it ended.
func (s *Submission) Kill(ctx context.Context, reason string) (*Result, error) {
	return s.follow.Kill(ctx, reason)
}

// RunOnYarn submits the job to the cluster conn names, waits for it to end
// and cleans up: everything `tfyarn run` does. A job that ran but did not
// succeed returns its Result and a *JobError.
func RunOnYarn(ctx context.Context, conn Connection, job Job) (*Result, error) {
	c, err := Connect(conn)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	s, err := c.Submit(ctx, job, Callbacks{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Wait(ctx, nil)
}
