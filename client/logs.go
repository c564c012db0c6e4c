package client

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/tasklogs"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// LogsRequest says which logs Logs prints.
type LogsRequest struct {
	AppID string
	// Task selects one task's containers ("worker:1"; "am" is the
	// ApplicationMaster's); empty: every container.
	Task string
	// Files selects log files by name (stdout, stderr, launch_container.sh,
	// ...); empty: every file.
	Files []string
	// Tail keeps each file's last Tail lines; 0 keeps everything.
	Tail int
	// Follow prints a running application's new lines as they come, each
	// prefixed by its task (see FollowOutput), until the application ends.
	Follow bool
	// PollInterval is how often Follow looks for new lines (default 1 s).
	PollInterval time.Duration
	// CallTimeout bounds each ResourceManager call (default 15 s).
	CallTimeout time.Duration
}

// LogSources is what Logs reads from: the ResourceManager, HDFS (for an
// ended application's aggregated logs, and a running one's status key) and
// the client
// configuration (where aggregated logs are, whether they are).
type LogSources struct {
	RM   *yarn.ApplicationClient
	HDFS func(context.Context) (*hdfs.FS, error)
	Conf *hadoopconf.Config
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
// stderr, ...); Follow writes whole lines and calls flush when the task's
// file ends.
type FollowOutput func(task, file string) io.Writer

// Logs prints an application's logs: a running application's from its
// NodeManagers (in `yarn logs`' format, or followed with Follow), an ended
// one's from the aggregated files on HDFS, exactly as Hadoop's
// `yarn logs -applicationId` prints them. notes gets one-line remarks
// (what is missing and why); follow is used only with Follow. The work is
// internal/tasklogs'; this is its public entry.
func Logs(ctx context.Context, src LogSources, req LogsRequest, out io.Writer, notes func(string), follow FollowOutput) error {
	err := tasklogs.Print(ctx, tasklogs.Sources{RM: src.RM, HDFS: src.HDFS, Conf: src.Conf, StatusKey: ReadStatusKey, Status: statusOf},
		tasklogs.Request(req), out, notes, tasklogs.FollowOutput(follow))
	var ue *tasklogs.UnavailableError
	if errors.As(err, &ue) {
		return &LogsUnavailableError{AppID: ue.AppID, Reason: ue.Reason, Retry: ue.Retry}
	}
	return err
}

// statusOf fetches the AM's status page (contract.StatusPath) once, with the
// job's status key.
func statusOf(ctx context.Context, r *hadoopyarn.ApplicationReportProto, key []byte) (*contract.StatusReport, error) {
	w := newStatusWatcher(key)
	defer w.close()
	w.locate(r)
	if w.url == "" {
		return nil, errors.New("the ApplicationMaster has not registered yet")
	}
	return w.fetch(ctx)
}

// TaskLogs follows some tasks' stdout and stderr while a Submission runs:
// `tfyarn run` shows the deciding task's output with it.
type TaskLogs struct{ f *tasklogs.TaskFollower }

// FollowTaskLogs starts following; Add names the tasks (as Wait's events
// show them), Finish reads an ended task's last lines, Close stops.
func (s *Submission) FollowTaskLogs(ctx context.Context, out FollowOutput, notes func(string), interval time.Duration) *TaskLogs {
	return &TaskLogs{f: tasklogs.FollowTasks(ctx, s.rm, s.job.User, s.job.CallTimeout, tasklogs.FollowOutput(out), notes, interval)}
}

// Add starts following a task's container (once per container).
func (t *TaskLogs) Add(ctx context.Context, task TaskResult) error {
	return t.f.Add(ctx, task.Task, task.ContainerID, task.Node)
}

// Finish prints an ended task's last lines.
func (t *TaskLogs) Finish(ctx context.Context, task TaskResult) { t.f.Finish(ctx, task.ContainerID) }

// Close stops following and flushes what is left.
func (t *TaskLogs) Close() { t.f.Close() }
