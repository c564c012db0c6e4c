package submit

import (
	"context"

	"github.com/tfyarn/tfyarn/internal/placement"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// fetchClusterState asks the RM what placement needs: its RUNNING nodes,
// node labels, and the queue's accessible labels, default label and
// capacities per label (`tfyarn cluster` shows the same data).
func fetchClusterState(ctx context.Context, rm *yarn.ApplicationClient, queue string) (placement.Cluster, error) {
	var cs placement.Cluster
	nodes, err := rm.GetClusterNodes(ctx, hadoopyarn.NodeStateProto_NS_RUNNING)
	if err != nil {
		return cs, err
	}
	labels, err := rm.GetClusterNodeLabels(ctx)
	if err != nil {
		return cs, err
	}
	q, err := rm.GetQueueInfo(ctx, queue, yarn.QueueInfoOptions{})
	if err != nil {
		return cs, err
	}
	for _, n := range nodes {
		cn := placement.Node{ID: yarn.FormatNodeID(n.GetNodeId()), Rack: n.GetRackName()}
		if l := n.GetNodeLabels(); len(l) > 0 {
			cn.Label = l[0]
		}
		capa := n.GetCapability()
		cn.MemoryMiB, cn.VCores, cn.GPUs = yarn.MemoryMiB(capa), yarn.VCores(capa), yarn.GPUs(capa)
		cs.Nodes = append(cs.Nodes, cn)
	}
	for _, l := range labels {
		cs.Labels = append(cs.Labels, l.GetName())
	}
	cs.Queue = readQueueOffer(queue, q)
	return cs, nil
}

// placement.Queue reads a queue's report. The capacities per label come from
// queueConfigurationsMap (absent from old RMs: no capacity check then).
func readQueueOffer(name string, q *hadoopyarn.QueueInfoProto) placement.Queue {
	o := placement.Queue{Name: name, AccessibleLabels: q.GetAccessibleNodeLabels(), DefaultLabel: q.GetDefaultNodeLabelExpression()}
	if q.GetQueueName() != "" {
		o.Name = q.GetQueueName()
	}
	if m := q.GetQueueConfigurationsMap(); len(m) > 0 {
		o.Capacity, o.MaxCapacity = map[string]float64{}, map[string]float64{}
		for _, e := range m {
			c := e.GetQueueConfigurations()
			o.Capacity[e.GetPartitionName()] = 100 * float64(c.GetCapacity())
			o.MaxCapacity[e.GetPartitionName()] = 100 * float64(c.GetMaxCapacity())
		}
	}
	return o
}
