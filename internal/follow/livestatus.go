package follow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/jobreport"
)

// StatusOf fetches a running application's report from its
// ApplicationMaster's status page (contract.StatusPath; the AM registers
// that page's port as its RPC port) once, bounded by statusTimeout. key is
// the job's status key (ReadStatusKey): the AM answers only a client that
// holds it.
func StatusOf(ctx context.Context, r *hadoopyarn.ApplicationReportProto, key []byte) (*contract.StatusReport, error) {
	w := newStatusWatcher(key)
	defer w.close()
	w.locate(r)
	if w.url == "" {
		return nil, errors.New("the ApplicationMaster has not registered yet")
	}
	return w.fetch(ctx)
}

// Live is the running application r's report from its AM, read with the
// status key its owner's staging directory holds; nil when it cannot be
// read (no AM yet, not a tfyarn application, or another user's job: only
// its owner holds the key the AM asks for).
func Live(ctx context.Context, fs func(context.Context) (*hdfs.FS, error), r *hadoopyarn.ApplicationReportProto) *jobreport.Report {
	hfs, err := fs(ctx)
	if err != nil {
		return nil
	}
	key, err := ReadStatusKey(ctx, hfs, r)
	if err != nil {
		return nil
	}
	live, err := StatusOf(ctx, r, key)
	if err != nil || live.AppID != yarn.FormatApplicationID(r.GetApplicationId()) {
		return nil
	}
	return live
}

// ReadStatusKey reads the status key of the running application r from its
// owner's staging directory, where the submitting client left it readable
// by the owner only (contract.StatusKeyName): another user's client gets a
// permission error, and no live status.
func ReadStatusKey(ctx context.Context, fs *hdfs.FS, r *hadoopyarn.ApplicationReportProto) ([]byte, error) {
	key, err := fs.ReadStatusKey(ctx, r.GetUser(), yarn.FormatApplicationID(r.GetApplicationId()), contract.StatusKeyName)
	if err != nil {
		return nil, fmt.Errorf("client: the job's status key: %w", err)
	}
	if err := contract.CheckStatusKey(key); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return key, nil
}

// History reads the history record an ended application's AM left on HDFS;
// the string says, in one line for users, why there is none (a non-tfyarn
// application has none).
func History(ctx context.Context, fs func(context.Context) (*hdfs.FS, error), user, appID string) (*jobreport.Report, string) {
	var rep jobreport.Report
	hfs, err := fs(ctx)
	if err == nil {
		var data []byte
		if data, err = hfs.ReadHistory(ctx, user, appID); err == nil {
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
