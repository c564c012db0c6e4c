package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// liveStatus fetches a running application's task table from its
// ApplicationMaster's status page (the AM registers that page's port as
// its RPC port), bounded by statusTimeout. key is the job's status key
// (readStatusKey): the AM answers only a client that holds it.
func liveStatus(ctx context.Context, r *hadoopyarn.ApplicationReportProto, key []byte) (*contract.StatusReport, error) {
	w := newStatusWatcher(key)
	defer w.close()
	w.locate(r)
	if w.url == "" {
		return nil, errors.New("client: the application has no ApplicationMaster address (yet)")
	}
	return w.fetch(ctx)
}

// readStatusKey reads the status key of the running application r from its
// owner's staging directory, where the submitting client left it readable
// by the owner only (contract.StatusKeyName): another user's client gets a
// permission error, and no live status.
func readStatusKey(ctx context.Context, fs *hdfs.FS, r *hadoopyarn.ApplicationReportProto) ([]byte, error) {
	key, err := fs.ReadStatusKey(ctx, r.GetUser(), yarn.FormatApplicationID(r.GetApplicationId()), contract.StatusKeyName)
	if err != nil {
		return nil, fmt.Errorf("client: the job's status key: %w", err)
	}
	if err := contract.CheckStatusKey(key); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return key, nil
}
