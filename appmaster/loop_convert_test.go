package appmaster

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/appmaster/core"
	"github.com/tfyarn/tfyarn/taskspec"
)

// An ask is one request for any node, relaxed locality; an in-place
// replacement's is the node, its (default) rack and "*" with relaxed
// locality off at the rack and "*": YARN's way of saying "this node only",
// as Hadoop's AMRMClient sends it. The label goes on "*" only, the one
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
}
