package clusterquery

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/clusterinfo"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"google.golang.org/protobuf/proto"
)

func TestClusterViewJSONShape(t *testing.T) {
	res := func(mem int64, vc int32, gpu int64) *hadoopyarn.ResourceProto {
		return yarn.NewResource(mem, vc, map[string]int64{yarn.ResourceGPU: gpu})
	}
	nodes := []clusterinfo.Node{
		newNode(&hadoopyarn.NodeReportProto{
			NodeId:    &hadoopyarn.NodeIdProto{Host: proto.String("nm1"), Port: proto.Int32(1)},
			NodeState: hadoopyarn.NodeStateProto_NS_RUNNING.Enum(), NodeLabels: []string{"gpu"},
			Used: res(1024, 1, 1), Capability: res(8192, 8, 2), NumContainers: proto.Int32(1),
		}),
		newNode(&hadoopyarn.NodeReportProto{
			NodeId:    &hadoopyarn.NodeIdProto{Host: proto.String("nm2"), Port: proto.Int32(2)},
			NodeState: hadoopyarn.NodeStateProto_NS_LOST.Enum(), Capability: res(65536, 64, 8),
		}),
	}
	root := &hadoopyarn.QueueInfoProto{
		QueueName: proto.String("root"), Capacity: proto.Float32(1), MaximumCapacity: proto.Float32(1),
		State: hadoopyarn.QueueStateProto_Q_RUNNING.Enum(), AccessibleNodeLabels: []string{"*"},
		ChildQueues: []*hadoopyarn.QueueInfoProto{{
			QueueName: proto.String("ml-gpu"), QueuePath: proto.String("root.ml-gpu"),
			Capacity: proto.Float32(0.4), MaximumCapacity: proto.Float32(1), CurrentCapacity: proto.Float32(0.125),
			State: hadoopyarn.QueueStateProto_Q_RUNNING.Enum(), AccessibleNodeLabels: []string{"gpu"},
			DefaultNodeLabelExpression: proto.String("gpu"),
		}},
	}
	v := clusterinfo.Cluster{
		ResourceManager: []string{"rm:8032"},
		Nodes:           nodes,
		Queues:          flattenQueues(root, ""),
		NodeLabels:      []clusterinfo.NodeLabel{{Name: "gpu", Exclusive: true}},
		ResourceTypes: newResourceTypes([]*hadoopyarn.ResourceTypeInfoProto{
			{Name: proto.String("yarn.io/gpu"), Type: hadoopyarn.ResourceTypesProto_COUNTABLE.Enum()},
			{Name: proto.String("vcores"), Type: hadoopyarn.ResourceTypesProto_COUNTABLE.Enum()},
			{Name: proto.String("memory-mb"), Units: proto.String("Mi"), Type: hadoopyarn.ResourceTypesProto_COUNTABLE.Enum()},
		}),
		MaxAllocation: newMaxAllocation(nodes, SchedulerMax{MemoryMB: 8192, VCores: 4, Capped: true}),
	}
	data, err := json.Marshal(v)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(data, &got))
	keys := func(m map[string]any) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		return k
	}
	require.ElementsMatch(t, []string{"resource_manager", "node_managers", "nodes", "queues", "node_labels", "resource_types", "max_allocation"}, keys(got))
	n0 := got["nodes"].([]any)[0].(map[string]any)
	require.ElementsMatch(t, []string{"id", "state", "rack", "http_address", "labels", "containers", "memory_mb", "vcores", "gpus", "resources", "health_report"}, keys(n0))
	require.Equal(t, map[string]any{"used": 1.0, "total": 2.0}, n0["gpus"])
	require.Equal(t, map[string]any{"used": 1024.0, "total": 8192.0}, n0["memory_mb"])

	qs := got["queues"].([]any)
	require.Len(t, qs, 2)
	require.Equal(t, []any{"ml-gpu"}, qs[0].(map[string]any)["children"])
	q1 := qs[1].(map[string]any)
	require.ElementsMatch(t, []string{"name", "path", "state", "capacity_percent", "max_capacity_percent", "current_capacity_percent", "accessible_labels", "default_label_expression", "children"}, keys(q1))
	require.Equal(t, "root.ml-gpu", q1["path"])
	require.Equal(t, 40.0, q1["capacity_percent"], "float32 noise rounded away")
	require.Equal(t, 12.5, q1["current_capacity_percent"])
	require.Equal(t, "gpu", q1["default_label_expression"])

	var names []string
	for _, rt := range got["resource_types"].([]any) {
		names = append(names, rt.(map[string]any)["name"].(string))
	}
	require.Equal(t, []string{"memory-mb", "vcores", "yarn.io/gpu"}, names)

	// The LOST 64-core node does not count; the scheduler cap does.
	ma := got["max_allocation"].(map[string]any)
	require.Equal(t, 8192.0, ma["memory_mb"])
	require.Equal(t, 4.0, ma["vcores"])
	require.Equal(t, map[string]any{"yarn.io/gpu": 2.0}, ma["resources"])
	require.Contains(t, ma["basis"], "derived")
}
