package client

import (
	"context"
	"encoding/json"
	"errors"
	"os"

	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/jobreport"
)

// Status is an application as the ResourceManager reports it and, for a
// tfyarn application, its job as its ApplicationMaster reports it.
type Status struct {
	Application
	// History is an ended application's record, which its AM wrote to
	// HDFS (/user/<user>/.tfyarn/history/<app>.json); HistoryError says,
	// in one line, why there is none.
	History      *jobreport.Report
	HistoryError string
	// Live is a running application's report from its AM; nil when it
	// could not be read (no AM yet, not a tfyarn application, or another
	// user's job: only its owner holds the key the AM asks for).
	Live *jobreport.Report
}

// Status reports an application: the ResourceManager's report, and the
// history record of an ended one or the live report of a running one.
func (c *Client) Status(ctx context.Context, appID string) (_ *Status, err error) {
	defer aboutApp(&err, appID)
	r, err := c.report(ctx, appID)
	if err != nil {
		return nil, err
	}
	st := &Status{Application: *newApplication(r)}
	if yarn.IsTerminal(r.GetYarnApplicationState()) {
		st.History, st.HistoryError = c.readHistory(ctx, st.User, st.ID)
		return st, nil
	}
	fs, err := c.hdfsFS(ctx)
	if err != nil {
		return st, nil
	}
	key, err := readStatusKey(ctx, fs, r)
	if err != nil {
		return st, nil
	}
	if live, err := liveStatus(ctx, r, key); err == nil && live.AppID == st.ID {
		st.Live = live
	}
	return st, nil
}

// readHistory reads the history record the application's AM left on HDFS;
// the error is one line for users (a non-tfyarn application has none).
func (c *Client) readHistory(ctx context.Context, user, appID string) (*jobreport.Report, string) {
	var rep jobreport.Report
	fs, err := c.hdfsFS(ctx)
	if err == nil {
		var data []byte
		if data, err = fs.ReadHistory(ctx, user, appID); err == nil {
			err = json.Unmarshal(data, &rep)
		}
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, "no history record at " + hdfs.HistoryPath(user, appID) + " (not a tfyarn application, or its AM did not end normally)"
	case errors.Is(err, os.ErrPermission):
		return nil, "the history record at " + hdfs.HistoryPath(user, appID) + " is private to " + user + " (the command line and stderr tails are theirs)"
	case err != nil:
		return nil, "reading the history record: " + err.Error()
	}
	return &rep, ""
}
