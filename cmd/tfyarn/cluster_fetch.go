package main

import (
	"context"
	"sort"

	"github.com/tfyarn/tfyarn/internal/yarn"
)

// fetchCluster asks the RM everything `tfyarn cluster` shows. The calls are
// few and cheap, so they run one after another on one connection.
func fetchCluster(ctx context.Context, rm *yarn.ApplicationClient, sched schedulerMax) (clusterView, error) {
	var v clusterView
	m, err := rm.GetClusterMetrics(ctx)
	if err != nil {
		return v, err
	}
	nodes, err := rm.GetClusterNodes(ctx)
	if err != nil {
		return v, err
	}
	root, err := rm.GetQueueInfo(ctx, "root", yarn.QueueInfoOptions{Recursive: true})
	if err != nil {
		return v, err
	}
	labels, err := rm.GetClusterNodeLabels(ctx)
	if err != nil {
		return v, err
	}
	types, err := rm.GetResourceTypeInfo(ctx)
	if err != nil {
		return v, err
	}

	v.ResourceManager = rm.Addrs()
	v.NodeManagers = nodeManagersView{
		Total:           m.GetNumNodeManagers(),
		Active:          m.GetNumActiveNms(),
		Lost:            m.GetNumLostNms(),
		Unhealthy:       m.GetNumUnhealthyNms(),
		Decommissioned:  m.GetNumDecommissionedNms(),
		Decommissioning: m.GetNumDecommissioningNms(),
		Rebooted:        m.GetNumRebootedNms(),
		Shutdown:        m.GetNumShutdownNms(),
	}
	v.Nodes = make([]nodeView, 0, len(nodes))
	for _, n := range nodes {
		v.Nodes = append(v.Nodes, newNodeView(n))
	}
	sort.Slice(v.Nodes, func(i, j int) bool { return v.Nodes[i].ID < v.Nodes[j].ID })
	v.Queues = flattenQueues(root, "")
	v.NodeLabels = make([]labelView, 0, len(labels))
	for _, l := range labels {
		v.NodeLabels = append(v.NodeLabels, labelView{Name: l.GetName(), Exclusive: l.GetIsExclusive()})
	}
	sort.Slice(v.NodeLabels, func(i, j int) bool { return v.NodeLabels[i].Name < v.NodeLabels[j].Name })
	v.ResourceTypes = newResTypeViews(types)
	v.MaxAllocation = newMaxAllocView(v.Nodes, sched)
	return v, nil
}
