// Package clusterquery asks the ResourceManager about the cluster: its
// NodeManagers, nodes, queues, node labels and resource types, and the
// largest container it can give (client.Client.Cluster, `tfyarn cluster`),
// in package clusterinfo's types.
package clusterquery

import (
	"context"
	"math"
	"sort"

	"github.com/tfyarn/tfyarn/clusterinfo"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// SchedulerMaxFrom reads the scheduler's per-container cap when the client
// configuration states it. yarn-default.xml's values (8192 MiB, 4 vcores)
// are not assumed: the RM's own yarn-site.xml often differs from the
// client's, and a wrong cap is worse than none.
func SchedulerMaxFrom(conf *hadoopconf.Config) SchedulerMax {
	const memKey, vcKey = "yarn.scheduler.maximum-allocation-mb", "yarn.scheduler.maximum-allocation-vcores"
	var m SchedulerMax
	if !conf.IsSet(memKey) && !conf.IsSet(vcKey) {
		return m
	}
	mem, err1 := conf.GetInt(memKey, 0)
	vc, err2 := conf.GetInt(vcKey, 0)
	if err1 != nil || err2 != nil {
		return m
	}
	return SchedulerMax{MemoryMB: int64(mem), VCores: int64(vc), Capped: true}
}

// round trims float32 noise (0.6 arrives as 0.60000002384) so that what
// the RM meant shows.
func round(f float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(f*p) / p
}

func newNode(n *hadoopyarn.NodeReportProto) clusterinfo.Node {
	labels := n.GetNodeLabels()
	if labels == nil {
		labels = []string{}
	}
	used, capa := n.GetUsed(), n.GetCapability()
	res := map[string]clusterinfo.Usage{}
	for k, total := range yarn.CustomResources(capa) {
		u, _ := yarn.ResourceValue(used, k)
		res[k] = clusterinfo.Usage{Used: u, Total: total}
	}
	return clusterinfo.Node{
		ID:           yarn.FormatNodeID(n.GetNodeId()),
		State:        yarn.NodeStateName(n.GetNodeState()),
		Rack:         n.GetRackName(),
		HTTPAddress:  n.GetHttpAddress(),
		Labels:       labels,
		Containers:   n.GetNumContainers(),
		MemoryMB:     clusterinfo.Usage{Used: yarn.MemoryMiB(used), Total: yarn.MemoryMiB(capa)},
		VCores:       clusterinfo.Usage{Used: yarn.VCores(used), Total: yarn.VCores(capa)},
		GPUs:         clusterinfo.Usage{Used: yarn.GPUs(used), Total: yarn.GPUs(capa)},
		Resources:    res,
		HealthReport: n.GetHealthReport(),
	}
}

// flattenQueues lists q and its descendants, parents first.
func flattenQueues(q *hadoopyarn.QueueInfoProto, parent string) []clusterinfo.Queue {
	if q == nil {
		return nil
	}
	path := q.GetQueuePath()
	if path == "" {
		path = q.GetQueueName()
		if parent != "" {
			path = parent + "." + path
		}
	}
	labels := q.GetAccessibleNodeLabels()
	if labels == nil {
		labels = []string{}
	}
	v := clusterinfo.Queue{
		Name:                   q.GetQueueName(),
		Path:                   path,
		State:                  yarn.QueueStateName(q.GetState()),
		CapacityPercent:        round(100*float64(q.GetCapacity()), 2),
		MaxCapacityPercent:     round(100*float64(q.GetMaximumCapacity()), 2),
		CurrentCapacityPercent: round(100*float64(q.GetCurrentCapacity()), 2),
		AccessibleLabels:       labels,
		DefaultLabelExpression: q.GetDefaultNodeLabelExpression(),
		Children:               []string{},
	}
	var rest []clusterinfo.Queue
	for _, c := range q.GetChildQueues() {
		sub := flattenQueues(c, path)
		v.Children = append(v.Children, sub[0].Name)
		rest = append(rest, sub...)
	}
	return append([]clusterinfo.Queue{v}, rest...)
}

func newResourceTypes(types []*hadoopyarn.ResourceTypeInfoProto) []clusterinfo.ResourceType {
	out := make([]clusterinfo.ResourceType, 0, len(types))
	for _, t := range types {
		out = append(out, clusterinfo.ResourceType{Name: t.GetName(), Units: t.GetUnits(), Type: t.GetType().String()})
	}
	rank := func(n string) int {
		switch n {
		case yarn.ResourceMemory:
			return 0
		case yarn.ResourceVCores:
			return 1
		}
		return 2
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := rank(out[i].Name), rank(out[j].Name)
		if ri != rj {
			return ri < rj
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// SchedulerMax is the cap yarn.scheduler.maximum-allocation-* put on one container.
type SchedulerMax struct {
	MemoryMB, VCores int64
	Capped           bool // the client configuration states a cap
}

func newMaxAllocation(nodes []clusterinfo.Node, sched SchedulerMax) clusterinfo.MaxAllocation {
	v := clusterinfo.MaxAllocation{Resources: map[string]int64{}}
	for _, n := range nodes {
		if n.State != "RUNNING" {
			continue
		}
		v.MemoryMB = max(v.MemoryMB, n.MemoryMB.Total)
		v.VCores = max(v.VCores, n.VCores.Total)
		for k, u := range n.Resources {
			v.Resources[k] = max(v.Resources[k], u.Total)
		}
	}
	if sched.MemoryMB > 0 {
		v.MemoryMB = min(v.MemoryMB, sched.MemoryMB)
	}
	if sched.VCores > 0 {
		v.VCores = min(v.VCores, sched.VCores)
	}
	v.Capped = sched.Capped
	v.Basis = clusterinfo.MaxAllocationBasis(sched.Capped, "the client configuration")
	return v
}

// Fetch asks the RM everything client.Client.Cluster returns. The calls are
// few and cheap, so they run one after another on one connection.
func Fetch(ctx context.Context, rm *yarn.ApplicationClient, sched SchedulerMax) (clusterinfo.Cluster, error) {
	var v clusterinfo.Cluster
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
	v.NodeManagers = clusterinfo.NodeManagerCounts{
		Total:           m.GetNumNodeManagers(),
		Active:          m.GetNumActiveNms(),
		Lost:            m.GetNumLostNms(),
		Unhealthy:       m.GetNumUnhealthyNms(),
		Decommissioned:  m.GetNumDecommissionedNms(),
		Decommissioning: m.GetNumDecommissioningNms(),
		Rebooted:        m.GetNumRebootedNms(),
		Shutdown:        m.GetNumShutdownNms(),
	}
	v.Nodes = make([]clusterinfo.Node, 0, len(nodes))
	for _, n := range nodes {
		v.Nodes = append(v.Nodes, newNode(n))
	}
	sort.Slice(v.Nodes, func(i, j int) bool { return v.Nodes[i].ID < v.Nodes[j].ID })
	v.Queues = flattenQueues(root, "")
	v.NodeLabels = make([]clusterinfo.NodeLabel, 0, len(labels))
	for _, l := range labels {
		v.NodeLabels = append(v.NodeLabels, clusterinfo.NodeLabel{Name: l.GetName(), Exclusive: l.GetIsExclusive()})
	}
	sort.Slice(v.NodeLabels, func(i, j int) bool { return v.NodeLabels[i].Name < v.NodeLabels[j].Name })
	v.ResourceTypes = newResourceTypes(types)
	v.MaxAllocation = newMaxAllocation(v.Nodes, sched)
	return v, nil
}
