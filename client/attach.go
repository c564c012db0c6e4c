package client

import (
	"context"

	"github.com/tfyarn/tfyarn/internal/explain"
	"github.com/tfyarn/tfyarn/internal/follow"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// Attach is a Submission of the application appID submitted earlier (by Submit, here or in
// another process), to Wait for, Kill or FollowTaskLogs as the submitter would: `tfyarn wait`.
// Its task table comes from the AM's status page, which only the application's owner can read
// (its status key is in the owner's staging directory); for another user's application Wait
// follows the ResourceManager's report alone. Its Close is the Client's to do.
func (c *Client) Attach(ctx context.Context, appID string) (_ *Submission, err error) {
	defer explain.AboutApp(&err, appID)
	r, err := c.report(ctx, appID)
	if err != nil {
		return nil, err
	}
	rm, err := c.session.RM()
	if err != nil {
		return nil, err
	}
	fs, err := c.session.HDFS(ctx)
	if err != nil {
		return nil, err
	}
	app := follow.App{AppID: appID, ID: r.GetApplicationId(), User: r.GetUser(), RM: rm, FS: fs}
	if !yarn.IsTerminal(r.GetYarnApplicationState()) {
		// Not an error when missing: the RM's report is enough to follow the application.
		app.StatusKey, _ = follow.ReadStatusKey(ctx, fs, r)
	}
	s := &Submission{AppID: appID, SubmittedAt: epochMS(r.GetStartTime())}
	s.follow = follow.New(app, follow.Options{CallTimeout: c.conn.CallTimeout, PollInterval: c.conn.PollInterval})
	return s, nil
}
