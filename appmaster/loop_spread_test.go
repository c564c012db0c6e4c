package appmaster

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/appmaster/core"
	"github.com/tfyarn/tfyarn/taskspec"
	"github.com/tfyarn/tfyarn/yarnpb/hadoopyarn"
)

// A spread group's ask is one SchedulingRequest: tagged, NODE anti-affinity
// on its own tag (max cardinality 0), its partition named, its count absolute.
func TestSchedulingRequestProto(t *testing.T) {
	m, err := core.New(core.Config{Job: taskspec.Job{
		Spread: "worker", NodeLabel: "gpu",
		Tasks: []taskspec.TaskGroup{
			{Type: taskspec.Worker, Instances: 3, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 256, GPUs: 1}},
			{Type: taskspec.PS, Instances: 1, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 256}},
		},
	}})
	require.NoError(t, err)
	var worker, ps core.Ask
	for _, a := range m.AskTable() {
		switch a.TaskType {
		case taskspec.Worker:
			worker = a
		case taskspec.PS:
			ps = a
		}
	}
	require.Equal(t, "tfyarn-worker", worker.SpreadTag)
	require.Equal(t, "gpu", worker.Partition)
	require.Empty(t, ps.SpreadTag, "ps is not spread: plain ResourceRequests")

	r := schedulingRequestProto(worker)
	require.Equal(t, worker.AllocationRequestID, r.GetAllocationRequestId())
	require.Equal(t, worker.Priority, r.GetPriority().GetPriority())
	require.Equal(t, []string{"tfyarn-worker"}, r.GetAllocationTags())
	require.EqualValues(t, 3, r.GetResourceSizing().GetNumAllocations())
	require.Equal(t, hadoopyarn.ExecutionTypeProto_GUARANTEED, r.GetExecutionType().GetExecutionType())
	c := r.GetPlacementConstraint().GetSimpleConstraint()
	require.Equal(t, "node", c.GetScope())
	require.Zero(t, c.GetMinCardinality())
	require.Zero(t, c.GetMaxCardinality())
	require.Len(t, c.GetTargetExpressions(), 2)
	tag, part := c.GetTargetExpressions()[0], c.GetTargetExpressions()[1]
	require.Equal(t, hadoopyarn.PlacementConstraintTargetProto_ALLOCATION_TAG, tag.GetTargetType())
	require.Equal(t, []string{"tfyarn-worker"}, tag.GetTargetValues())
	require.Equal(t, hadoopyarn.PlacementConstraintTargetProto_NODE_ATTRIBUTE, part.GetTargetType())
	require.Equal(t, "yarn_node_partition/", part.GetTargetKey())
	require.Equal(t, []string{"gpu"}, part.GetTargetValues())
}
