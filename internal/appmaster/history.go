package appmaster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/taskspec"
)

// writeHistory leaves the job's final report, every task with its
// container, node, exit code, restarts and times, at hdfs.HistoryPath:
// the staging directory goes with the job, and YARN keeps only a summary.
func (s *amSecurity) writeHistory(ctx context.Context, rep contract.StatusReport) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("appmaster: encoding the history record: %w", err)
	}
	fs, err := hdfs.ConnectOptions(ctx, s.conf, s.hdfsOptions())
	if err != nil {
		return err
	}
	defer fs.Close()
	return fs.WriteHistory(ctx, s.jf.AppID, data)
}

// saveResult keeps a task's result at hdfs.AppResultsDir for `tfyarn result`, with the
// keytab's login or the job's HDFS delegation tokens.
func (s *amSecurity) saveResult(ctx context.Context, task taskspec.TaskID, f *os.File) error {
	fs, err := hdfs.ConnectOptions(ctx, s.conf, s.hdfsOptions())
	if err != nil {
		return err
	}
	defer fs.Close()
	return fs.WriteResult(ctx, s.jf.AppID, string(task.Type), task.Index, f)
}
