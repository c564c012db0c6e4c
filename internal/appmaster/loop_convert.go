package appmaster

import (
	"math"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
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

// Names of Hadoop's PlacementConstraints: the scope of one node, the
// node attribute that is a node's partition (its label), and the
// allocation tag namespace of the application's own containers.
const (
	scopeNode          = "node"
	nodePartitionKey   = "yarn_node_partition/"
	selfAllocNamespace = "self"
)

// schedulingRequestProto is a placed Ask (core.Ask.Scheduling: --spread,
// --colocate, --apart) as one SchedulingRequest under the group's
// allocation_request_id and priority: containers tagged SpreadTag and
// AffinityTag, placed by one NODE-scope constraint in the Ask's partition:
// anti-affinity on SpreadTag (max cardinality 0: no container of ours with
// the tag on the node yet), or on Affinity.Other's tag (`notin`, --apart)
// or affinity to it (min cardinality 1: `in`, --colocate); a group that
// only carries a tag for others gets a constraint any node meets (0 or
// more of its own tag), which still names the partition. Every field but
// the count stays the same from one call to the next, as the RM requires;
// Hadoop 3.2's RM compares a re-ask (a restart's) with its copy proto by
// proto, and its copy has attribute_op_code written by its own conversion:
// it is sent explicitly, NO_OP, the value every RM takes it for when absent.
func schedulingRequestProto(a core.Ask) *hadoopyarn.SchedulingRequestProto {
	var custom map[string]int64
	if a.Resource.GPUs > 0 {
		custom = map[string]int64{yarn.ResourceGPU: a.Resource.GPUs}
	}
	var tags []string
	for _, t := range []string{a.SpreadTag, a.AffinityTag} {
		if t != "" && (len(tags) == 0 || tags[0] != t) {
			tags = append(tags, t)
		}
	}
	target, minCard, maxCard := a.SpreadTag, int32(0), int32(0)
	switch {
	case a.SpreadTag != "":
	case a.Affinity.Type != "" && a.Affinity.Apart:
		target = taskspec.AffinityTag(a.Affinity.Other)
	case a.Affinity.Type != "":
		target, minCard, maxCard = taskspec.AffinityTag(a.Affinity.Other), 1, math.MaxInt32
	default:
		target, minCard, maxCard = a.AffinityTag, 0, math.MaxInt32
	}
	targets := []*hadoopyarn.PlacementConstraintTargetProto{{
		TargetType:   hadoopyarn.PlacementConstraintTargetProto_ALLOCATION_TAG.Enum(),
		TargetKey:    proto.String(selfAllocNamespace),
		TargetValues: []string{target},
	}}
	if a.Partition != "" {
		targets = append(targets, &hadoopyarn.PlacementConstraintTargetProto{
			TargetType:   hadoopyarn.PlacementConstraintTargetProto_NODE_ATTRIBUTE.Enum(),
			TargetKey:    proto.String(nodePartitionKey),
			TargetValues: []string{a.Partition},
		})
	}
	return &hadoopyarn.SchedulingRequestProto{
		AllocationRequestId: proto.Int64(a.AllocationRequestID),
		Priority:            &hadoopyarn.PriorityProto{Priority: proto.Int32(a.Priority)},
		ExecutionType: &hadoopyarn.ExecutionTypeRequestProto{
			ExecutionType:        hadoopyarn.ExecutionTypeProto_GUARANTEED.Enum(),
			EnforceExecutionType: proto.Bool(true),
		},
		AllocationTags: tags,
		ResourceSizing: &hadoopyarn.ResourceSizingProto{
			NumAllocations: proto.Int32(int32(a.Count)),
			Resources:      yarn.NewResource(a.Resource.MemoryMiB, a.Resource.VCores, custom),
		},
		PlacementConstraint: &hadoopyarn.PlacementConstraintProto{
			SimpleConstraint: &hadoopyarn.SimplePlacementConstraintProto{
				Scope:             proto.String(scopeNode),
				TargetExpressions: targets,
				MinCardinality:    proto.Int32(minCard),
				MaxCardinality:    proto.Int32(maxCard),
				AttributeOpCode:   hadoopyarn.NodeAttributeOpCodeProto_NO_OP.Enum(),
			},
		},
	}
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
