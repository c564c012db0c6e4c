package client

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/tfyarn/tfyarn/internal/explain"
	"github.com/tfyarn/tfyarn/internal/follow"
	"github.com/tfyarn/tfyarn/internal/tasklogs"
	"github.com/tfyarn/tfyarn/jobreport"
)

// LogsRequest says which of an application's logs Logs prints, and how.
type LogsRequest struct {
	// Task selects one task's containers ("worker:1"; "am" is the
	// ApplicationMaster's); empty: every container.
	Task string
	// Files selects log files by name (stdout, stderr, launch_container.sh,
	// ...); empty: every file (with Follow: stdout and stderr).
	Files []string
	// Tail keeps each file's last Tail lines; 0 keeps everything.
	Tail int
	// Follow prints a running application's new lines as they come, each
	// prefixed by its task (see FollowOutput), until the application ends.
	Follow bool
	// PollInterval is how often Follow looks for new lines (default 1 s).
	PollInterval time.Duration
	// Notes, if set, gets one-line remarks: what is missing and why.
	Notes func(string)
	// FollowOutput gives Follow the writer of each task's file; nil is
	// PrefixedOutput(out, out) of Logs' out.
	FollowOutput FollowOutput
}

// LogsUnavailableError says why an application's logs cannot be read (yet):
// Retry is true while YARN is still aggregating them.
type LogsUnavailableError struct {
	AppID  string
	Reason string
	Retry  bool
}

func (e *LogsUnavailableError) Error() string { return "logs of " + e.AppID + ": " + e.Reason }

// FollowOutput gives Follow the writer for one task's file (stdout,
// stderr, ...); Follow writes whole lines and calls the writer's Flush,
// if it has one, when the task's file ends.
type FollowOutput func(task, file string) io.Writer

// PrefixedOutput is the FollowOutput of tfyarn logs --follow and of run's
// live task output: a task's stdout lines go to stdout, its other files'
// (stderr) to stderr, each prefixed with its task ("[worker:1] ") as run
// --local prints them. stdout and stderr may be the same writer.
func PrefixedOutput(stdout, stderr io.Writer) FollowOutput {
	return FollowOutput(tasklogs.PrefixedOutput(stdout, stderr))
}

// Logs prints the logs of application appID to out: a running
// application's from its NodeManagers (in `yarn logs`' format, or
// followed with req.Follow), an ended one's from the aggregated files on
// HDFS, exactly as Hadoop's `yarn logs -applicationId` prints them, also
// for an application the ResourceManager no longer knows. Logs that cannot
// be read (yet) are a *LogsUnavailableError. The work is internal/tasklogs';
// this is its public entry.
func (c *Client) Logs(ctx context.Context, appID string, req LogsRequest, out io.Writer) (err error) {
	defer func() {
		// A *LogsUnavailableError names the application itself.
		var ue *LogsUnavailableError
		if !errors.As(err, &ue) {
			explain.AboutApp(&err, appID)
		}
	}()
	rm, err := c.session.RM()
	if err != nil {
		return err
	}
	followOut := req.FollowOutput
	if followOut == nil {
		followOut = PrefixedOutput(out, out)
	}
	src := tasklogs.Sources{RM: rm, HDFS: c.session.HDFS, Conf: c.conf, StatusKey: follow.ReadStatusKey, Status: follow.StatusOf}
	treq := tasklogs.Request{AppID: appID, Task: req.Task, Files: req.Files, Tail: req.Tail, Follow: req.Follow,
		PollInterval: req.PollInterval, CallTimeout: c.conn.CallTimeout}
	err = tasklogs.Print(ctx, src, treq, out, req.Notes, tasklogs.FollowOutput(followOut))
	var ue *tasklogs.UnavailableError
	if errors.As(err, &ue) {
		return &LogsUnavailableError{AppID: ue.AppID, Reason: ue.Reason, Retry: ue.Retry}
	}
	return err
}

// TaskLogs follows some tasks' stdout and stderr while a Submission runs:
// `tfyarn run` shows the deciding task's output with it.
type TaskLogs struct{ f *tasklogs.TaskFollower }

// FollowTaskLogs starts following; Add names the tasks (as Wait's events
// show them), Finish reads an ended task's last lines, Close stops.
func (s *Submission) FollowTaskLogs(ctx context.Context, out FollowOutput, notes func(string), interval time.Duration) *TaskLogs {
	f := s.follow
	return &TaskLogs{f: tasklogs.FollowTasks(ctx, f.RM, f.User, f.CallTimeout(), tasklogs.FollowOutput(out), notes, interval)}
}

// Add starts following a task's container (once per container).
func (t *TaskLogs) Add(ctx context.Context, task jobreport.Task) error {
	return t.f.Add(ctx, task.Task, task.ContainerID, task.Node)
}

// Finish prints an ended task's last lines.
func (t *TaskLogs) Finish(ctx context.Context, task jobreport.Task) {
	t.f.Finish(ctx, task.ContainerID)
}

// Close stops following and flushes what is left.
func (t *TaskLogs) Close() { t.f.Close() }
