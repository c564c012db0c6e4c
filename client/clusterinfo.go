package client

import (
	"context"
	"math"
	"sort"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// Cluster asks the ResourceManager for its NodeManagers, nodes, queues,
// node labels and resource types, and derives the largest container it can
// give (see MaxAllocation).
func (c *Client) Cluster(ctx context.Context) (*ClusterInfo, error) {
	rm, err := c.session.RM()
	if err != nil {
		return nil, err
	}
	v, err := fetchCluster(ctx, rm, schedulerMaxFrom(c.conf))
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// schedulerMaxFrom reads the scheduler's per-container cap when the client
// configuration states it. yarn-default.xml's values (8192 MiB, 4 vcores)
// are not assumed: the RM's own yarn-site.xml often differs from the
// client's, and a wrong cap is worse than none.
func schedulerMaxFrom(conf *hadoopconf.Config) schedulerMax {
	const memKey, vcKey = "yarn.scheduler.maximum-allocation-mb", "yarn.scheduler.maximum-allocation-vcores"
	var m schedulerMax
	if !conf.IsSet(memKey) && !conf.IsSet(vcKey) {
		return m
	}
	mem, err1 := conf.GetInt(memKey, 0)
	vc, err2 := conf.GetInt(vcKey, 0)
	if err1 != nil || err2 != nil {
		return m
	}
	return schedulerMax{MemoryMB: int64(mem), VCores: int64(vc), Capped: true}
}

// round trims float32 noise (0.6 arrives as 0.60000002384) so that what
// the RM meant shows.
func round(f float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(f*p) / p
}

// ClusterInfo is the cluster as the ResourceManager reports it: its
// NodeManagers, nodes, queues, node labels, resource types and the largest
// container it can give. It marshals as `tfyarn cluster --output json`:
//
//	{"resource_manager": ["localhost:8032"],
//	 "node_managers": {"total": 2, "active": 2, "lost": 0, "unhealthy": 0, "decommissioned": 0, ...},
//	 "nodes": [{"id": "host:port", "state": "RUNNING", "rack": "/default-rack", "http_address": "...",
//	            "labels": ["gpu"], "containers": 0,
//	            "memory_mb": {"used": 0, "total": 8192}, "vcores": {...}, "gpus": {...},
//	            "resources": {"yarn.io/gpu": {"used": 0, "total": 2}}, "health_report": ""}],
//	 "queues": [{"name": "default", "path": "root.default", "state": "RUNNING",
//	             "capacity_percent": 60, "max_capacity_percent": 100, "current_capacity_percent": 0,
//	             "accessible_labels": ["*"], "default_label_expression": "", "children": ["..."]}],
//	 "node_labels": [{"name": "gpu", "exclusive": true}],
//	 "resource_types": [{"name": "memory-mb", "units": "Mi", "type": "COUNTABLE"}, ...],
//	 "max_allocation": {"memory_mb": 8192, "vcores": 4, "resources": {"yarn.io/gpu": 2}, "basis": "..."}}
//
// Nodes are sorted by id, queues by path (parents before children),
// resource types memory-mb, vcores, then by name.
type ClusterInfo struct {
	ResourceManager []string          `json:"resource_manager"`
	NodeManagers    NodeManagerCounts `json:"node_managers"`
	Nodes           []Node            `json:"nodes"`
	Queues          []Queue           `json:"queues"`
	NodeLabels      []NodeLabel       `json:"node_labels"`
	ResourceTypes   []ResourceType    `json:"resource_types"`
	MaxAllocation   MaxAllocation     `json:"max_allocation"`
}

// NodeManagerCounts are the cluster metrics' NodeManager counts by state.
type NodeManagerCounts struct {
	Total           int32 `json:"total"`
	Active          int32 `json:"active"`
	Lost            int32 `json:"lost"`
	Unhealthy       int32 `json:"unhealthy"`
	Decommissioned  int32 `json:"decommissioned"`
	Decommissioning int32 `json:"decommissioning"`
	Rebooted        int32 `json:"rebooted"`
	Shutdown        int32 `json:"shutdown"`
}

// Usage is a resource's use out of its total.
type Usage struct {
	Used  int64 `json:"used"`
	Total int64 `json:"total"`
}

// Node is one NodeManager's report.
type Node struct {
	ID           string           `json:"id"`
	State        string           `json:"state"`
	Rack         string           `json:"rack"`
	HTTPAddress  string           `json:"http_address"`
	Labels       []string         `json:"labels"`
	Containers   int32            `json:"containers"`
	MemoryMB     Usage            `json:"memory_mb"`
	VCores       Usage            `json:"vcores"`
	GPUs         Usage            `json:"gpus"`
	Resources    map[string]Usage `json:"resources"`
	HealthReport string           `json:"health_report"`
}

// Queue is one scheduler queue; Path names it in full (root.a.b).
type Queue struct {
	Name                   string   `json:"name"`
	Path                   string   `json:"path"`
	State                  string   `json:"state"`
	CapacityPercent        float64  `json:"capacity_percent"`
	MaxCapacityPercent     float64  `json:"max_capacity_percent"`
	CurrentCapacityPercent float64  `json:"current_capacity_percent"`
	AccessibleLabels       []string `json:"accessible_labels"`
	DefaultLabelExpression string   `json:"default_label_expression"`
	Children               []string `json:"children"`
}

// NodeLabel is one node label; an exclusive label's nodes serve only
// requests for it.
type NodeLabel struct {
	Name      string `json:"name"`
	Exclusive bool   `json:"exclusive"`
}

// ResourceType is a resource the cluster schedules (memory-mb, vcores,
// yarn.io/gpu...).
type ResourceType struct {
	Name  string `json:"name"`
	Units string `json:"units"`
	Type  string `json:"type"`
}

// MaxAllocation is the largest single container the cluster can give.
// ApplicationClientProtocol reports the scheduler's own maximum only in
// getNewApplication's reply, and `cluster` must not create applications, so
// this is derived: the largest node's capability, capped by
// yarn.scheduler.maximum-allocation-{mb,vcores} when the client
// configuration sets them. Basis says so.
type MaxAllocation struct {
	MemoryMB  int64            `json:"memory_mb"`
	VCores    int64            `json:"vcores"`
	Resources map[string]int64 `json:"resources"`
	Basis     string           `json:"basis"`
	// Capped says the client configuration's
	// yarn.scheduler.maximum-allocation-{mb,vcores} capped it.
	Capped bool `json:"-"`
}

// MaxAllocationBasis is MaxAllocation.Basis: how it was derived, capped
// or not by the scheduler's maximum the client configuration (from, for
// people: where it was loaded from) states.
func MaxAllocationBasis(capped bool, from string) string {
	basis := "derived: largest RUNNING node"
	if capped {
		basis += ", capped by yarn.scheduler.maximum-allocation-mb/-vcores from " + from
	}
	return basis + " (the RM reports its own maximum only when creating an application)"
}

func newNode(n *hadoopyarn.NodeReportProto) Node {
	labels := n.GetNodeLabels()
	if labels == nil {
		labels = []string{}
	}
	used, capa := n.GetUsed(), n.GetCapability()
	res := map[string]Usage{}
	for k, total := range yarn.CustomResources(capa) {
		u, _ := yarn.ResourceValue(used, k)
		res[k] = Usage{Used: u, Total: total}
	}
	return Node{
		ID:           yarn.FormatNodeID(n.GetNodeId()),
		State:        yarn.NodeStateName(n.GetNodeState()),
		Rack:         n.GetRackName(),
		HTTPAddress:  n.GetHttpAddress(),
		Labels:       labels,
		Containers:   n.GetNumContainers(),
		MemoryMB:     Usage{Used: yarn.MemoryMiB(used), Total: yarn.MemoryMiB(capa)},
		VCores:       Usage{Used: yarn.VCores(used), Total: yarn.VCores(capa)},
		GPUs:         Usage{Used: yarn.GPUs(used), Total: yarn.GPUs(capa)},
		Resources:    res,
		HealthReport: n.GetHealthReport(),
	}
}

// flattenQueues lists q and its descendants, parents first.
func flattenQueues(q *hadoopyarn.QueueInfoProto, parent string) []Queue {
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
	v := Queue{
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
	var rest []Queue
	for _, c := range q.GetChildQueues() {
		sub := flattenQueues(c, path)
		v.Children = append(v.Children, sub[0].Name)
		rest = append(rest, sub...)
	}
	return append([]Queue{v}, rest...)
}

func newResourceTypes(types []*hadoopyarn.ResourceTypeInfoProto) []ResourceType {
	out := make([]ResourceType, 0, len(types))
	for _, t := range types {
		out = append(out, ResourceType{Name: t.GetName(), Units: t.GetUnits(), Type: t.GetType().String()})
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

// schedulerMax is the cap yarn.scheduler.maximum-allocation-* put on one container.
type schedulerMax struct {
	MemoryMB, VCores int64
	Capped           bool // the client configuration states a cap
}

func newMaxAllocation(nodes []Node, sched schedulerMax) MaxAllocation {
	v := MaxAllocation{Resources: map[string]int64{}}
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
	v.Basis = MaxAllocationBasis(sched.Capped, "the client configuration")
	return v
}

// fetchCluster asks the RM everything Cluster returns. The calls are
// few and cheap, so they run one after another on one connection.
func fetchCluster(ctx context.Context, rm *yarn.ApplicationClient, sched schedulerMax) (ClusterInfo, error) {
	var v ClusterInfo
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
	v.NodeManagers = NodeManagerCounts{
		Total:           m.GetNumNodeManagers(),
		Active:          m.GetNumActiveNms(),
		Lost:            m.GetNumLostNms(),
		Unhealthy:       m.GetNumUnhealthyNms(),
		Decommissioned:  m.GetNumDecommissionedNms(),
		Decommissioning: m.GetNumDecommissioningNms(),
		Rebooted:        m.GetNumRebootedNms(),
		Shutdown:        m.GetNumShutdownNms(),
	}
	v.Nodes = make([]Node, 0, len(nodes))
	for _, n := range nodes {
		v.Nodes = append(v.Nodes, newNode(n))
	}
	sort.Slice(v.Nodes, func(i, j int) bool { return v.Nodes[i].ID < v.Nodes[j].ID })
	v.Queues = flattenQueues(root, "")
	v.NodeLabels = make([]NodeLabel, 0, len(labels))
	for _, l := range labels {
		v.NodeLabels = append(v.NodeLabels, NodeLabel{Name: l.GetName(), Exclusive: l.GetIsExclusive()})
	}
	sort.Slice(v.NodeLabels, func(i, j int) bool { return v.NodeLabels[i].Name < v.NodeLabels[j].Name })
	v.ResourceTypes = newResourceTypes(types)
	v.MaxAllocation = newMaxAllocation(v.Nodes, sched)
	return v, nil
}
