package client

import (
	"context"
	"errors"

	"github.com/tfyarn/tfyarn/contract"
	"github.com/tfyarn/tfyarn/yarnpb/hadoopyarn"
)

// LiveStatus fetches a running application's task table from its
// ApplicationMaster's status page (the AM registers that page's port as
// its RPC port), bounded by statusTimeout.
func LiveStatus(ctx context.Context, r *hadoopyarn.ApplicationReportProto) (*contract.StatusReport, error) {
	w := newStatusWatcher()
	defer w.close()
	w.locate(r)
	if w.url == "" {
		return nil, errors.New("client: the application has no ApplicationMaster address (yet)")
	}
	return w.fetch(ctx)
}
