package client

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/tfyarn/tfyarn/internal/explain"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// Task results: what a task's program wrote to the file TFYARN_RESULT_FILE names (at most 64
// MiB), which its launcher hands the ApplicationMaster when the program exits and the AM keeps on
// HDFS, the user's alone (/user/<user>/.tfyarn/results/<app>/, 0700). They stay until
// DeleteResults, or CleanStaging once 7 days old.

// ErrNoResult is TaskResult's error for a task that saved no result.
var ErrNoResult = errors.New("no result")

// ResultInfo is one task's saved result.
type ResultInfo struct {
	Task  string `json:"task"` // worker:0
	Bytes int64  `json:"bytes"`
}

// Results lists the saved results of the user's application appID, by task: empty when none.
func (c *Client) Results(ctx context.Context, appID string) (_ []ResultInfo, err error) {
	defer explain.AboutApp(&err, appID)
	fs, err := c.session.HDFS(ctx)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ListResults(ctx, fs.User(), appID)
	out := make([]ResultInfo, 0, len(entries))
	for _, e := range entries {
		out = append(out, ResultInfo(e))
	}
	return out, err
}

// TaskResult copies the saved result of appID's task (worker:0) to w and returns its size;
// ErrNoResult (wrapped) when the task saved none.
func (c *Client) TaskResult(ctx context.Context, appID, task string, w io.Writer) (_ int64, err error) {
	defer explain.AboutApp(&err, appID)
	fs, err := c.session.HDFS(ctx)
	if err != nil {
		return 0, err
	}
	n, err := fs.ReadResult(ctx, fs.User(), appID, task, w)
	if errors.Is(err, os.ErrNotExist) {
		return 0, errors.Join(ErrNoResult, err)
	}
	return n, err
}

// DeleteResults removes the saved results of the user's application appID (none: nothing to do).
func (c *Client) DeleteResults(ctx context.Context, appID string) (err error) {
	defer explain.AboutApp(&err, appID)
	fs, err := c.session.HDFS(ctx)
	if err != nil {
		return err
	}
	return fs.RemoveResults(ctx, appID)
}

// cleanOldResults removes (or, dryRun, lists) the user's results saved hdfs.ResultsKeepDays ago
// or more.
func cleanOldResults(ctx context.Context, fs *hdfs.FS, dryRun bool) ([]string, error) {
	return fs.OldResults(ctx, time.Now().AddDate(0, 0, -hdfs.ResultsKeepDays), !dryRun)
}
