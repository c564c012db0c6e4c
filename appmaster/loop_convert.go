package appmaster

import (
	"github.com/tfyarn/tfyarn/appmaster/core"
	"github.com/tfyarn/tfyarn/taskspec"
	"github.com/tfyarn/tfyarn/yarn"
	"github.com/tfyarn/tfyarn/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// askProtos is one Ask as ResourceRequests, one per resource name the
// core chose (Ask.Localities: "*", or for an in-place replacement its
// node, its rack and "*"), all under the group's own
// allocation_request_id and priority.
func askProtos(a core.Ask) []*hadoopyarn.ResourceRequestProto {
	var custom map[string]int64
	if a.Resource.GPUs > 0 {
		// Only when asked: a zero entry for a type the RM lacks is noise.
		custom = map[string]int64{yarn.ResourceGPU: a.Resource.GPUs}
	}
	var reqs []*hadoopyarn.ResourceRequestProto
	for _, l := range a.Localities() {
		r := &hadoopyarn.ResourceRequestProto{
			Priority:            &hadoopyarn.PriorityProto{Priority: proto.Int32(a.Priority)},
			ResourceName:        proto.String(l.Name),
			Capability:          yarn.NewResource(a.Resource.MemoryMiB, a.Resource.VCores, custom),
			NumContainers:       proto.Int32(int32(a.Count)),
			RelaxLocality:       proto.Bool(l.Relax),
			AllocationRequestId: proto.Int64(a.AllocationRequestID),
		}
		if a.NodeLabel != "" && l.Name == "*" {
			r.NodeLabelExpression = proto.String(a.NodeLabel)
		}
		reqs = append(reqs, r)
	}
	return reqs
}

// nodeRacks reads the racks of the nodes in RM NodeReports, by host.
func nodeRacks(nodes []*hadoopyarn.NodeReportProto) map[string]string {
	racks := make(map[string]string, len(nodes))
	for _, n := range nodes {
		if host, rack := n.GetNodeId().GetHost(), n.GetRackName(); host != "" && rack != "" {
			racks[host] = rack
		}
	}
	return racks
}

// containerOf reduces an allocated container to what the machine sees.
func containerOf(c *hadoopyarn.ContainerProto) core.Container {
	return core.Container{
		ID:              yarn.FormatContainerID(c.GetId()),
		NodeID:          yarn.FormatNodeID(c.GetNodeId()),
		NodeHTTPAddress: c.GetNodeHttpAddress(),
		Resource: taskspec.Resources{
			VCores:    int32(yarn.VCores(c.GetResource())),
			MemoryMiB: yarn.MemoryMiB(c.GetResource()),
			GPUs:      yarn.GPUs(c.GetResource()),
		},
		AllocationRequestID: c.GetAllocationRequestId(),
		Priority:            c.GetPriority().GetPriority(),
	}
}

// finalStatusProto maps the machine's status to unregister's.
func finalStatusProto(s core.FinalStatus) hadoopyarn.FinalApplicationStatusProto {
	switch s {
	case core.Succeeded:
		return hadoopyarn.FinalApplicationStatusProto_APP_SUCCEEDED
	case core.Killed:
		return hadoopyarn.FinalApplicationStatusProto_APP_KILLED
	}
	return hadoopyarn.FinalApplicationStatusProto_APP_FAILED
}
