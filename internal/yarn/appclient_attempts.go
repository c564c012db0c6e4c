package yarn

import (
	"context"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// GetApplicationAttemptReport is one ApplicationMaster attempt as the RM
// knows it: its state and, once it ended, why (its diagnostics).
func (c *ApplicationClient) GetApplicationAttemptReport(ctx context.Context, app *hadoopyarn.ApplicationIdProto, attempt int32) (*hadoopyarn.ApplicationAttemptReportProto, error) {
	req := &hadoopyarn.GetApplicationAttemptReportRequestProto{ApplicationAttemptId: &hadoopyarn.ApplicationAttemptIdProto{
		ApplicationId: app,
		AttemptId:     proto.Int32(attempt),
	}}
	resp := &hadoopyarn.GetApplicationAttemptReportResponseProto{}
	if err := c.call(ctx, "getApplicationAttemptReport", req, resp); err != nil {
		return nil, err
	}
	return resp.GetApplicationAttemptReport(), nil
}
