package main

import (
	"sort"

	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// clusterView is the JSON shape of `tfyarn cluster --output json`:
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
type clusterView struct {
	ResourceManager []string         `json:"resource_manager"`
	NodeManagers    nodeManagersView `json:"node_managers"`
	Nodes           []nodeView       `json:"nodes"`
	Queues          []queueView      `json:"queues"`
	NodeLabels      []labelView      `json:"node_labels"`
	ResourceTypes   []resTypeView    `json:"resource_types"`
	MaxAllocation   maxAllocView     `json:"max_allocation"`
}

type nodeManagersView struct {
	Total           int32 `json:"total"`
	Active          int32 `json:"active"`
	Lost            int32 `json:"lost"`
	Unhealthy       int32 `json:"unhealthy"`
	Decommissioned  int32 `json:"decommissioned"`
	Decommissioning int32 `json:"decommissioning"`
	Rebooted        int32 `json:"rebooted"`
	Shutdown        int32 `json:"shutdown"`
}

type usage struct {
	Used  int64 `json:"used"`
	Total int64 `json:"total"`
}

type nodeView struct {
	ID           string           `json:"id"`
	State        string           `json:"state"`
	Rack         string           `json:"rack"`
	HTTPAddress  string           `json:"http_address"`
	Labels       []string         `json:"labels"`
	Containers   int32            `json:"containers"`
	MemoryMB     usage            `json:"memory_mb"`
	VCores       usage            `json:"vcores"`
	GPUs         usage            `json:"gpus"`
	Resources    map[string]usage `json:"resources"`
	HealthReport string           `json:"health_report"`
}

type queueView struct {
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

type labelView struct {
	Name      string `json:"name"`
	Exclusive bool   `json:"exclusive"`
}

type resTypeView struct {
	Name  string `json:"name"`
	Units string `json:"units"`
	Type  string `json:"type"`
}

// maxAllocView is the largest single container the cluster can give.
// ApplicationClientProtocol reports the scheduler's own maximum only in
// getNewApplication's reply, and `cluster` must not create applications, so
// this is derived: the largest node's capability, capped by
// yarn.scheduler.maximum-allocation-{mb,vcores} when the client
// configuration sets them. Basis says so in the output.
type maxAllocView struct {
	MemoryMB  int64            `json:"memory_mb"`
	VCores    int64            `json:"vcores"`
	Resources map[string]int64 `json:"resources"`
	Basis     string           `json:"basis"`
}

func newNodeView(n *hadoopyarn.NodeReportProto) nodeView {
	labels := n.GetNodeLabels()
	if labels == nil {
		labels = []string{}
	}
	used, capa := n.GetUsed(), n.GetCapability()
	res := map[string]usage{}
	for k, total := range yarn.CustomResources(capa) {
		u, _ := yarn.ResourceValue(used, k)
		res[k] = usage{Used: u, Total: total}
	}
	return nodeView{
		ID:           yarn.FormatNodeID(n.GetNodeId()),
		State:        yarn.NodeStateName(n.GetNodeState()),
		Rack:         n.GetRackName(),
		HTTPAddress:  n.GetHttpAddress(),
		Labels:       labels,
		Containers:   n.GetNumContainers(),
		MemoryMB:     usage{Used: yarn.MemoryMiB(used), Total: yarn.MemoryMiB(capa)},
		VCores:       usage{Used: yarn.VCores(used), Total: yarn.VCores(capa)},
		GPUs:         usage{Used: yarn.GPUs(used), Total: yarn.GPUs(capa)},
		Resources:    res,
		HealthReport: n.GetHealthReport(),
	}
}

// flattenQueues lists q and its descendants, parents first.
func flattenQueues(q *hadoopyarn.QueueInfoProto, parent string) []queueView {
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
	v := queueView{
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
	var rest []queueView
	for _, c := range q.GetChildQueues() {
		sub := flattenQueues(c, path)
		v.Children = append(v.Children, sub[0].Name)
		rest = append(rest, sub...)
	}
	return append([]queueView{v}, rest...)
}

func newResTypeViews(types []*hadoopyarn.ResourceTypeInfoProto) []resTypeView {
	out := make([]resTypeView, 0, len(types))
	for _, t := range types {
		out = append(out, resTypeView{Name: t.GetName(), Units: t.GetUnits(), Type: t.GetType().String()})
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
	From             string // where the numbers came from; empty: no cap known
}

func newMaxAllocView(nodes []nodeView, sched schedulerMax) maxAllocView {
	v := maxAllocView{Resources: map[string]int64{}}
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
	v.Basis = "derived: largest RUNNING node"
	if sched.From != "" {
		v.Basis += ", capped by yarn.scheduler.maximum-allocation-mb/-vcores from " + sched.From
	}
	v.Basis += " (the RM reports its own maximum only when creating an application)"
	return v
}
