package appmaster

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// writeHistory leaves the job's final report, every task with its
// container, node, exit code, restarts and times, at hdfs.HistoryPath:
// the staging directory goes with the job, and YARN keeps only a summary.
// An AM of a Kerberized job without a keytab has delegation tokens only,
// which cannot write (hdfs.ErrTokenOnly): its history is not kept.
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
