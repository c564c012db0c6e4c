// Package clusterinfo is the cluster as its ResourceManager reports it:
// NodeManagers, nodes, queues, node labels, resource types and the largest
// container it can give, as client.Client.Cluster returns it and `tfyarn
// cluster --output json` prints it. Types only, a public leaf (the standard
// library alone), so that the internal code that asks the ResourceManager
// (internal/clusterquery) fills them directly.
package clusterinfo

// Cluster is the cluster as the ResourceManager reports it: its
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
type Cluster struct {
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
