package appmaster

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
	"google.golang.org/protobuf/proto"
)

// An ask is one request for any node, relaxed locality; an in-place
// replacement's is the node, its rack (the RM's word, else YARN's default)
// and "*" with relaxed locality off at the rack and "*": YARN's way of
// saying "this node only", as Hadoop's AMRMClient sends it. The label goes on "*" only, the one
// request a scheduler reads it from.
func TestAskProtos(t *testing.T) {
	a := core.Ask{TaskType: taskspec.Worker, AllocationRequestID: 2, Priority: 2, Resource: taskspec.Resources{VCores: 1, MemoryMiB: 512}, NodeLabel: "gpu", Count: 3}
	reqs := askProtos(a)
	require.Len(t, reqs, 1)
	require.Equal(t, "*", reqs[0].GetResourceName())
	require.True(t, reqs[0].GetRelaxLocality())
	require.Equal(t, int32(3), reqs[0].GetNumContainers())
	require.Equal(t, "gpu", reqs[0].GetNodeLabelExpression())

	a.Node, a.AllocationRequestID, a.Count = "node7.example.com", 1001, 1
	reqs = askProtos(a)
	require.Len(t, reqs, 3)
	type req struct {
		name  string
		relax bool
		label string
	}
	var got []req
	for _, r := range reqs {
		require.Equal(t, int64(1001), r.GetAllocationRequestId(), "one allocation_request_id for the three")
		require.Equal(t, int32(2), r.GetPriority().GetPriority())
		require.Equal(t, int32(1), r.GetNumContainers())
		require.Equal(t, int64(512), r.GetCapability().GetMemory())
		got = append(got, req{r.GetResourceName(), r.GetRelaxLocality(), r.GetNodeLabelExpression()})
	}
	require.Equal(t, []req{{"node7.example.com", true, ""}, {"/default-rack", false, ""}, {"*", false, "gpu"}}, got)

	a.Rack = "/dc1/rack4"
	reqs = askProtos(a)
	require.Len(t, reqs, 3)
	require.Equal(t, "/dc1/rack4", reqs[1].GetResourceName())
	require.False(t, reqs[1].GetRelaxLocality())
}

// The racks of NodeReports are keyed by host, the name in-place asks use;
// reports without a host or a rack tell nothing.
func TestNodeRacks(t *testing.T) {
	report := func(host, rack string) *hadoopyarn.NodeReportProto {
		return &hadoopyarn.NodeReportProto{NodeId: &hadoopyarn.NodeIdProto{Host: proto.String(host), Port: proto.Int32(8041)}, RackName: proto.String(rack)}
	}
	got := nodeRacks([]*hadoopyarn.NodeReportProto{report("n1", "/r1"), report("n2", ""), report("", "/r3"), report("n4", "/dc/r4")})
	require.Equal(t, map[string]string{"n1": "/r1", "n4": "/dc/r4"}, got)
}
