package tasklogs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/tasklogs/aggregated"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// Hadoop's defaults for where aggregated logs go (YarnConfiguration).
const (
	defaultRemoteLogDir    = "/tmp/logs"
	defaultRemoteLogSuffix = "logs"
	tfileFormat            = "TFile"
	ifileFormat            = "IFile"
	tmpLogSuffix           = ".tmp"      // a node's file still being written
	checksumLogSuffix      = "-checksum" // IFile's record of a cycle in progress
)

// logFormats are the aggregation file formats the cluster writes, in the
// order Hadoop's readers try them (yarn.log-aggregation.file-formats).
func logFormats(src Sources) []string {
	var out []string
	for _, f := range strings.Split(src.Conf.GetDefault("yarn.log-aggregation.file-formats", tfileFormat), ",") {
		if f = strings.TrimSpace(f); f == tfileFormat || f == ifileFormat {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		out = []string{tfileFormat}
	}
	return out
}

// aggregatedLogDirs are the directories an application's aggregated logs
// of one format may be in, as Hadoop's LogAggregationFileController
// computes them: <root>/<user>/bucket-<suffix>/<app id % 10000>/<app>
// (Hadoop 3.3 on), then <root>/<user>/<suffix>/<app> (older NodeManagers).
func aggregatedLogDirs(src Sources, format, user, appID string, seq int32) []string {
	conf := src.Conf
	root, _ := conf.Get("yarn.log-aggregation." + format + ".remote-app-log-dir")
	if root == "" {
		root = conf.GetDefault("yarn.nodemanager.remote-app-log-dir", defaultRemoteLogDir)
	}
	suffix, _ := conf.Get("yarn.log-aggregation." + format + ".remote-app-log-dir-suffix")
	if suffix == "" {
		suffix = conf.GetDefault("yarn.nodemanager.remote-app-log-dir-suffix", defaultRemoteLogSuffix) + "-" + strings.ToLower(format)
	}
	if u, err := urlPath(root); err == nil {
		root = u
	}
	bucket := fmt.Sprintf("%04d", seq%10000)
	return []string{
		path.Join(root, user, "bucket-"+suffix, bucket, appID),
		path.Join(root, user, suffix, appID),
	}
}

// urlPath is the path of hdfs://nn:8020/tmp/logs, or the path itself.
func urlPath(s string) (string, error) {
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			return rest[j:], nil
		}
		return "/", nil
	}
	return s, nil
}

func printAggregated(ctx context.Context, src Sources, req Request, r *hadoopyarn.ApplicationReportProto, out io.Writer, notes func(string)) error {
	// The status is absent from reports of RMs that do not track it, and
	// for applications the RM does not know: the configuration says then.
	var status hadoopyarn.LogAggregationStatusProto
	if r.LogAggregationStatus != nil {
		status = r.GetLogAggregationStatus()
	}
	enabled, _ := src.Conf.GetBool("yarn.log-aggregation-enable", false)
	if status == hadoopyarn.LogAggregationStatusProto_LOG_DISABLED || (!enabled && status == 0) {
		return &UnavailableError{AppID: req.AppID, Reason: "log aggregation is disabled on this cluster (yarn.log-aggregation-enable is not true): " +
			"an ended application's logs stay on its NodeManagers' local disks (yarn.nodemanager.log-dirs) until deleted; " +
			"use tfyarn logs while the application runs"}
	}
	fs, err := src.HDFS(ctx)
	if err != nil {
		return err
	}
	user := r.GetUser()
	if user == "" {
		user = fs.User()
	}
	var dir, format string
	var nodes []os.FileInfo
	var tried []string
dirs:
	for _, f := range logFormats(src) {
		for _, d := range aggregatedLogDirs(src, f, user, req.AppID, r.GetApplicationId().GetId()) {
			tried = append(tried, d)
			nodes, err = fs.ReadDir(ctx, d)
			if err == nil {
				dir, format = d, f
				break dirs
			}
			if !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("tasklogs: reading the aggregated logs of %s: %s: %w", req.AppID, d, err)
			}
		}
	}
	pending := status == hadoopyarn.LogAggregationStatusProto_LOG_NOT_START || status == hadoopyarn.LogAggregationStatusProto_LOG_RUNNING
	if dir == "" {
		if pending {
			return &UnavailableError{AppID: req.AppID, Retry: true, Reason: "YARN is still aggregating them (log aggregation " + aggregationName(status) + "); try again in a few seconds"}
		}
		return &UnavailableError{AppID: req.AppID, Reason: "no aggregated logs under " + tried[0] +
			" (log aggregation " + aggregationName(status) + "; deleted after yarn.log-aggregation.retain-seconds, or aggregated elsewhere)"}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name() < nodes[j].Name() })
	var tasks map[string]string // container -> task, when a task is selected
	if req.Task != "" {
		if tasks, err = containerTasks(ctx, fs, dir, format, nodes); err != nil {
			return err
		}
	}
	found := false
	for _, n := range nodes {
		if !isNodeLog(n) {
			continue
		}
		err := withHDFSFile(ctx, fs, path.Join(dir, n.Name()), func(f io.ReaderAt, size int64) error {
			keep := func(lf aggregated.File) bool {
				if tasks != nil && !req.wantTask(tasks[lf.Container]) {
					return false
				}
				if !req.wantFile(lf.Name) {
					return false
				}
				found = true
				return true
			}
			var body func(io.Writer, io.Reader) error
			if req.Tail > 0 {
				body = func(w io.Writer, r io.Reader) error { return tailLines(w, r, req.Tail) }
			}
			if format == ifileFormat {
				return aggregated.PrintIFile(out, f, size, n.Name(), keep, body)
			}
			return aggregated.Print(out, f, size, n.Name(), n.ModTime(), keep, body)
		})
		if err != nil {
			return fmt.Errorf("tasklogs: aggregated logs of %s: %s: %w", req.AppID, n.Name(), err)
		}
	}
	if pending {
		notes(fmt.Sprintf("log aggregation of %s is still running: some containers' logs may be missing; run tfyarn logs again in a few seconds", req.AppID))
	}
	if !found && pending {
		return &UnavailableError{AppID: req.AppID, Retry: true, Reason: "YARN is still aggregating them (log aggregation " + aggregationName(status) + "); try again in a few seconds"}
	}
	if !found {
		what := "no log files"
		if req.Task != "" {
			what += " of task " + req.Task
		}
		if len(req.Files) > 0 {
			what += " named " + strings.Join(req.Files, ", ")
		}
		return &UnavailableError{AppID: req.AppID, Retry: pending, Reason: what + " in " + dir}
	}
	return nil
}

// withHDFSFile opens p and passes fn a reader at any offset and its size.
func withHDFSFile(ctx context.Context, fs *hdfs.FS, p string, fn func(io.ReaderAt, int64) error) error {
	f, err := fs.Open(ctx, p)
	if err != nil {
		return err
	}
	defer f.Close()
	return fn(f, f.Size())
}

func aggregationName(s hadoopyarn.LogAggregationStatusProto) string {
	if s == 0 {
		return "status unknown"
	}
	return strings.TrimPrefix(s.String(), "LOG_")
}

// containerTasks maps each aggregated container to its task, from the
// TFYARN_TASK its launch_container.sh exports ("am" when none does).
func containerTasks(ctx context.Context, fs *hdfs.FS, dir, format string, nodes []os.FileInfo) (map[string]string, error) {
	tasks := map[string]string{}
	read := aggregated.ReadTFile
	if format == ifileFormat {
		read = aggregated.ReadIFile
	}
	for _, n := range nodes {
		if !isNodeLog(n) {
			continue
		}
		err := withHDFSFile(ctx, fs, path.Join(dir, n.Name()), func(f io.ReaderAt, size int64) error {
			return read(f, size, func(lf aggregated.File) error {
				if _, ok := tasks[lf.Container]; !ok {
					tasks[lf.Container] = "am"
				}
				if lf.Name != "launch_container.sh" || lf.Length > 1<<20 {
					return nil
				}
				var b bytes.Buffer
				if _, err := io.Copy(&b, lf.Content); err != nil {
					return err
				}
				if t := taskOfLaunchScript(b.Bytes()); t != "" {
					tasks[lf.Container] = t
				}
				return nil
			})
		})
		if err != nil {
			return nil, fmt.Errorf("tasklogs: aggregated logs: %s: %w", n.Name(), err)
		}
	}
	return tasks, nil
}

// isNodeLog reports whether a file of an application's log directory is a
// node's finished aggregated log.
func isNodeLog(n os.FileInfo) bool {
	return !n.IsDir() && !strings.HasSuffix(n.Name(), tmpLogSuffix) && !strings.HasSuffix(n.Name(), checksumLogSuffix)
}
