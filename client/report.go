package client

import (
	"context"

	"github.com/tfyarn/tfyarn/internal/explain"
	"github.com/tfyarn/tfyarn/internal/follow"
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
	defer explain.AboutApp(&err, appID)
	r, err := c.report(ctx, appID)
	if err != nil {
		return nil, err
	}
	st := &Status{Application: *newApplication(r)}
	if yarn.IsTerminal(r.GetYarnApplicationState()) {
		st.History, st.HistoryError = follow.History(ctx, c.session.HDFS, st.User, st.ID)
		return st, nil
	}
	st.Live = follow.Live(ctx, c.session.HDFS, r)
	return st, nil
}
