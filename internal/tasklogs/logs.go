package tasklogs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/tasklogs/aggregated"
	"github.com/tfyarn/tfyarn/internal/tasklogs/nodemanager"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// Request says which logs Print prints.
type Request struct {
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

// Sources is what Print reads from: the ResourceManager, HDFS (for an
// ended application's aggregated logs), the client configuration (where
// aggregated logs are, whether they are), and a running application's
// task table, which names its containers.
type Sources struct {
	RM *yarn.ApplicationClient
	// HDFS connects to the default filesystem, or returns the connection
	// it made before: the filesystem stays the caller's to close.
	HDFS func(context.Context) (*hdfs.FS, error)
	Conf *hadoopconf.Config
	// StatusKey reads a running job's status key from its owner's staging
	// directory on HDFS (the AM's status page answers only its holder).
	StatusKey func(context.Context, *hdfs.FS, *hadoopyarn.ApplicationReportProto) ([]byte, error)
	// Status fetches the ApplicationMaster's status page once, with the
	// job's status key.
	Status func(context.Context, *hadoopyarn.ApplicationReportProto, []byte) (*contract.StatusReport, error)
}

// UnavailableError says why an application's logs cannot be read (yet):
// Retry is true while YARN is still aggregating them.
type UnavailableError struct {
	AppID  string
	Reason string
	Retry  bool
}

func (e *UnavailableError) Error() string { return "logs of " + e.AppID + ": " + e.Reason }

// FollowOutput gives Follow the writer for one task's file (stdout,
// stderr, ...); Follow writes whole lines and calls flush when the task's
// file ends.
type FollowOutput func(task, file string) io.Writer

// Print prints an application's logs, choosing where from: a running
// application's from its NodeManagers (in `yarn logs`' format, or followed
// with Follow), an ended one's from the aggregated files on HDFS, exactly
// as Hadoop's `yarn logs -applicationId` prints them. notes gets one-line
// remarks (what is missing and why); follow is used only with Follow.
func Print(ctx context.Context, src Sources, req Request, out io.Writer, notes func(string), follow FollowOutput) error {
	if req.CallTimeout <= 0 {
		req.CallTimeout = 15 * time.Second
	}
	if req.PollInterval <= 0 {
		req.PollInterval = time.Second
	}
	if notes == nil {
		notes = func(string) {}
	}
	id, err := yarn.ParseApplicationID(req.AppID)
	if err != nil {
		return err
	}
	r, err := appReport(ctx, src.RM, id, req.CallTimeout)
	if yarn.IsApplicationNotFound(err) {
		// Ended before the RM restarted, or beyond the ended applications
		// it remembers: its aggregated logs may still be there.
		notes(fmt.Sprintf("the ResourceManager does not know %s: reading its aggregated logs from HDFS directly", req.AppID))
		lerr := printAggregated(ctx, src, req, &hadoopyarn.ApplicationReportProto{ApplicationId: id}, out, notes)
		var ue *UnavailableError
		if errors.As(lerr, &ue) {
			return err
		}
		return lerr
	}
	if err != nil {
		return err
	}
	if !yarn.IsTerminal(r.GetYarnApplicationState()) {
		lv := &liveLogs{src: src, req: req, id: id, notes: notes}
		if req.Follow {
			return lv.follow(ctx, r, follow)
		}
		return lv.print(ctx, r, out)
	}
	if req.Follow {
		notes(fmt.Sprintf("%s has ended (%s): printing its aggregated logs", req.AppID, yarn.AppStateName(r.GetYarnApplicationState())))
	}
	return printAggregated(ctx, src, req, r, out, notes)
}

func appReport(ctx context.Context, rm *yarn.ApplicationClient, id *hadoopyarn.ApplicationIdProto, limit time.Duration) (*hadoopyarn.ApplicationReportProto, error) {
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	return rm.GetApplicationReport(cctx, id)
}

// taskContainer is one container of the application and the task it ran.
type taskContainer struct {
	task      string // worker:1, am
	container string
	node      string // NodeId host:port
}

// wantTask reports whether req selects the task.
func (req Request) wantTask(task string) bool {
	return req.Task == "" || req.Task == task
}

func (req Request) wantFile(name string) bool {
	if len(req.Files) == 0 {
		return true
	}
	for _, f := range req.Files {
		if f == name {
			return true
		}
	}
	return false
}

// tailLines keeps the last n lines of what r yields, holding at most
// maxTailBytes (the lines of a file longer than that are cut). An
// aggregated log's content is first skipped to its last tailWindow(n)
// bytes, unread where the format allows (aggregated.Skip): the tail of
// a 50 MB log costs its end, not the whole file.
func tailLines(w io.Writer, r io.Reader, n int) error {
	if left, ok := aggregated.Remaining(r); ok && left > tailWindow(n) {
		if err := aggregated.Skip(r, left-tailWindow(n)); err != nil {
			return err
		}
	}
	buf := make([]byte, 0, 64<<10)
	chunk := make([]byte, 64<<10)
	for {
		k, err := r.Read(chunk)
		buf = append(buf, chunk[:k]...)
		if len(buf) > 2*maxTailBytes {
			buf = append(buf[:0], buf[len(buf)-maxTailBytes:]...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	_, err := w.Write(nodemanager.LastLines(buf, n))
	return err
}

const maxTailBytes = 32 << 20

// tailWindow is how much of a log's end --tail n reads: 4 KiB a line, at
// least 1 MiB, at most maxTailBytes.
func tailWindow(n int) int64 {
	return min(max(int64(n)*4<<10, 1<<20), maxTailBytes)
}

// taskOfLaunchScript reads the task a container ran from its
// launch_container.sh (the AM puts TFYARN_TASK in every task's
// environment; the AM's own container has none).
func taskOfLaunchScript(script []byte) string {
	for _, line := range strings.Split(string(script), "\n") {
		if v, ok := strings.CutPrefix(line, "export "+contract.EnvTask+"=\""); ok {
			return strings.TrimSuffix(v, "\"")
		}
	}
	return ""
}
