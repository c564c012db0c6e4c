package yarn

import (
	"context"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// GetNewApplication asks the RM for a fresh application id. The reply also
// carries the scheduler's maximum allocation for one container.
func (c *ApplicationClient) GetNewApplication(ctx context.Context) (*hadoopyarn.GetNewApplicationResponseProto, error) {
	resp := &hadoopyarn.GetNewApplicationResponseProto{}
	if err := c.call(ctx, "getNewApplication", &hadoopyarn.GetNewApplicationRequestProto{}, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// SubmitApplication submits an application whose id came from
// GetNewApplication. Acceptance is asynchronous: poll the report to see it
// reach ACCEPTED (or FAILED, e.g. for an unknown queue).
func (c *ApplicationClient) SubmitApplication(ctx context.Context, app *hadoopyarn.ApplicationSubmissionContextProto) error {
	req := &hadoopyarn.SubmitApplicationRequestProto{ApplicationSubmissionContext: app}
	return c.call(ctx, "submitApplication", req, &hadoopyarn.SubmitApplicationResponseProto{})
}

// GetApplicationReport returns the RM's report on one application. An id the
// RM does not know gives an error for which IsApplicationNotFound is true.
func (c *ApplicationClient) GetApplicationReport(ctx context.Context, id *hadoopyarn.ApplicationIdProto) (*hadoopyarn.ApplicationReportProto, error) {
	req := &hadoopyarn.GetApplicationReportRequestProto{ApplicationId: id}
	resp := &hadoopyarn.GetApplicationReportResponseProto{}
	if err := c.call(ctx, "getApplicationReport", req, resp); err != nil {
		return nil, err
	}
	return resp.GetApplicationReport(), nil
}

// ApplicationFilter selects applications; empty fields don't filter.
type ApplicationFilter struct {
	States []hadoopyarn.YarnApplicationStateProto
	Queues []string
	Types  []string // application types, e.g. "TENSORFLOW"
	Users  []string
	Tags   []string
	Limit  int64 // 0: no limit
}

// GetApplications lists the applications matching f, as the RM orders them.
func (c *ApplicationClient) GetApplications(ctx context.Context, f ApplicationFilter) ([]*hadoopyarn.ApplicationReportProto, error) {
	req := &hadoopyarn.GetApplicationsRequestProto{
		ApplicationStates: f.States,
		Queues:            f.Queues,
		ApplicationTypes:  f.Types,
		Users:             f.Users,
		ApplicationTags:   f.Tags,
	}
	if f.Limit > 0 {
		req.Limit = proto.Int64(f.Limit)
	}
	resp := &hadoopyarn.GetApplicationsResponseProto{}
	if err := c.call(ctx, "getApplications", req, resp); err != nil {
		return nil, err
	}
	return resp.GetApplications(), nil
}

// ForceKillApplication asks the RM to kill an application. killed reports
// whether the kill already completed; usually it has not, and the report
// turns KILLED a moment later (see KillApplication).
func (c *ApplicationClient) ForceKillApplication(ctx context.Context, id *hadoopyarn.ApplicationIdProto, diagnostics string) (killed bool, err error) {
	req := &hadoopyarn.KillApplicationRequestProto{ApplicationId: id}
	if diagnostics != "" {
		req.Diagnostics = proto.String(diagnostics)
	}
	resp := &hadoopyarn.KillApplicationResponseProto{}
	if err := c.call(ctx, "forceKillApplication", req, resp); err != nil {
		return false, err
	}
	return resp.GetIsKillCompleted(), nil
}

// GetClusterMetrics returns the NodeManager counts.
func (c *ApplicationClient) GetClusterMetrics(ctx context.Context) (*hadoopyarn.YarnClusterMetricsProto, error) {
	resp := &hadoopyarn.GetClusterMetricsResponseProto{}
	if err := c.call(ctx, "getClusterMetrics", &hadoopyarn.GetClusterMetricsRequestProto{}, resp); err != nil {
		return nil, err
	}
	return resp.GetClusterMetrics(), nil
}

// GetClusterNodes reports the nodes in the given states; no states means
// every state (the RM's default).
func (c *ApplicationClient) GetClusterNodes(ctx context.Context, states ...hadoopyarn.NodeStateProto) ([]*hadoopyarn.NodeReportProto, error) {
	req := &hadoopyarn.GetClusterNodesRequestProto{NodeStates: states}
	resp := &hadoopyarn.GetClusterNodesResponseProto{}
	if err := c.call(ctx, "getClusterNodes", req, resp); err != nil {
		return nil, err
	}
	return resp.GetNodeReports(), nil
}

// QueueInfoOptions choose how much of the queue tree GetQueueInfo returns.
type QueueInfoOptions struct {
	ChildQueues  bool // include the queue's children
	Recursive    bool // and their children, all the way down
	Applications bool // include each queue's application reports
}

// GetQueueInfo reports on queue (e.g. "root", "default" or a full path).
func (c *ApplicationClient) GetQueueInfo(ctx context.Context, queue string, o QueueInfoOptions) (*hadoopyarn.QueueInfoProto, error) {
	req := &hadoopyarn.GetQueueInfoRequestProto{
		QueueName:           proto.String(queue),
		IncludeChildQueues:  proto.Bool(o.ChildQueues || o.Recursive),
		Recursive:           proto.Bool(o.Recursive),
		IncludeApplications: proto.Bool(o.Applications),
	}
	resp := &hadoopyarn.GetQueueInfoResponseProto{}
	if err := c.call(ctx, "getQueueInfo", req, resp); err != nil {
		return nil, err
	}
	return resp.GetQueueInfo(), nil
}

// GetClusterNodeLabels lists the cluster's node labels. Labels that only an
// old RM reports by name (deprecatedNodeLabels) come back exclusive, which is
// what such an RM means.
func (c *ApplicationClient) GetClusterNodeLabels(ctx context.Context) ([]*hadoopyarn.NodeLabelProto, error) {
	resp := &hadoopyarn.GetClusterNodeLabelsResponseProto{}
	if err := c.call(ctx, "getClusterNodeLabels", &hadoopyarn.GetClusterNodeLabelsRequestProto{}, resp); err != nil {
		return nil, err
	}
	labels := resp.GetNodeLabels()
	if len(labels) == 0 {
		for _, name := range resp.GetDeprecatedNodeLabels() {
			labels = append(labels, &hadoopyarn.NodeLabelProto{Name: proto.String(name), IsExclusive: proto.Bool(true)})
		}
	}
	return labels, nil
}

// GetResourceTypeInfo lists the resource types the RM knows (memory-mb,
// vcores and e.g. yarn.io/gpu). Ask before requesting a custom type: the RM
// drops types it does not know without saying so.
func (c *ApplicationClient) GetResourceTypeInfo(ctx context.Context) ([]*hadoopyarn.ResourceTypeInfoProto, error) {
	resp := &hadoopyarn.GetAllResourceTypeInfoResponseProto{}
	if err := c.call(ctx, "getResourceTypeInfo", &hadoopyarn.GetAllResourceTypeInfoRequestProto{}, resp); err != nil {
		return nil, err
	}
	return resp.GetResourceTypeInfo(), nil
}
