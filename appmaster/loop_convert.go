package appmaster

import (
	"github.com/tfyarn/tfyarn/appmaster/core"
	"github.com/tfyarn/tfyarn/taskspec"
	"github.com/tfyarn/tfyarn/yarn"
	"github.com/tfyarn/tfyarn/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

// askProtos is one Ask as ResourceRequests: any node with relaxed
// locality, under the group's own allocation_request_id and priority; for
// an in-place replacement (Ask.Node) the node itself, plus its rack and
// "*" with relaxed locality off, which is how YARN's schedulers are told
// "this node only" (Hadoop's AMRMClient sends the same three). The rack is
// YARN's default one: the AM does not know the cluster's topology, and on
// a cluster with a topology script no container comes, so the core falls
// back to restarting the cluster after taskspec.InPlaceWait.
func askProtos(a core.Ask) []*hadoopyarn.ResourceRequestProto {
	var custom map[string]int64
	if a.Resource.GPUs > 0 {
		// Only when asked: a zero entry for a type the RM lacks is noise.
		custom = map[string]int64{yarn.ResourceGPU: a.Resource.GPUs}
	}
	req := func(name string, relax bool) *hadoopyarn.ResourceRequestProto {
		r := &hadoopyarn.ResourceRequestProto{
			Priority:            &hadoopyarn.PriorityProto{Priority: proto.Int32(a.Priority)},
			ResourceName:        proto.String(name),
			Capability:          yarn.NewResource(a.Resource.MemoryMiB, a.Resource.VCores, custom),
			NumContainers:       proto.Int32(int32(a.Count)),
			RelaxLocality:       proto.Bool(relax),
			AllocationRequestId: proto.Int64(a.AllocationRequestID),
		}
		if a.NodeLabel != "" && name == "*" {
			r.NodeLabelExpression = proto.String(a.NodeLabel)
		}
		return r
	}
	if a.Node == "" {
		return []*hadoopyarn.ResourceRequestProto{req("*", true)}
	}
	return []*hadoopyarn.ResourceRequestProto{req(a.Node, true), req(defaultRack, false), req("*", false)}
}

// defaultRack is YARN's rack of a node without topology information
// (NetworkTopology.DEFAULT_RACK).
const defaultRack = "/default-rack"

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
