package appmaster

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
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
	// Sent, not left to its default: Hadoop 3.2's RM compares a re-ask with its own copy proto
	// by proto, and its copy has the field written (docs/hadoop-versions.md).
	require.NotNil(t, c.AttributeOpCode)
	require.Equal(t, hadoopyarn.NodeAttributeOpCodeProto_NO_OP, c.GetAttributeOpCode())
	require.Len(t, c.GetTargetExpressions(), 2)
	tag, part := c.GetTargetExpressions()[0], c.GetTargetExpressions()[1]
	require.Equal(t, hadoopyarn.PlacementConstraintTargetProto_ALLOCATION_TAG, tag.GetTargetType())
	require.Equal(t, []string{"tfyarn-worker"}, tag.GetTargetValues())
	require.Equal(t, hadoopyarn.PlacementConstraintTargetProto_NODE_ATTRIBUTE, part.GetTargetType())
	require.Equal(t, "yarn_node_partition/", part.GetTargetKey())
	require.Equal(t, []string{"gpu"}, part.GetTargetValues())
}

// --colocate ps=worker with --spread worker: the worker's request keeps
// its spread, the ps request asks `in` the worker's tag (min cardinality
// 1); --apart evaluator=chief: `notin` the chief's tag, and the chief,
// which only carries its tag for the evaluator, gets a constraint every
// node meets (0 or more of its own tag).
func TestSchedulingRequestProtoAffinity(t *testing.T) {
	job := taskspec.Job{
		Command: "true", Spread: "worker",
		Affinities: taskspec.Affinities{
			{Type: taskspec.PS, Other: taskspec.Worker},
			{Type: taskspec.Evaluator, Other: taskspec.Chief, Apart: true},
		},
		Tasks: []taskspec.TaskGroup{
			{Type: taskspec.Chief, Instances: 1, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 256}},
			{Type: taskspec.Worker, Instances: 2, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 256}},
			{Type: taskspec.PS, Instances: 1, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 256}},
			{Type: taskspec.Evaluator, Instances: 1, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 256}},
		},
	}
	require.NoError(t, job.Validate(taskspec.ClusterLimits{}))
	m, err := core.New(core.Config{Job: job})
	require.NoError(t, err)
	asks := map[taskspec.TaskType]core.Ask{}
	for _, a := range m.AskTable() {
		require.True(t, a.Scheduling(), "%s asks with a SchedulingRequest", a.TaskType)
		asks[a.TaskType] = a
	}
	type want struct {
		tags     []string
		target   string
		min, max int32
	}
	for typ, w := range map[taskspec.TaskType]want{
		taskspec.Worker:    {[]string{"tfyarn-worker"}, "tfyarn-worker", 0, 0},
		taskspec.PS:        {[]string{"tfyarn-ps"}, "tfyarn-worker", 1, 2147483647},
		taskspec.Chief:     {[]string{"tfyarn-chief"}, "tfyarn-chief", 0, 2147483647},
		taskspec.Evaluator: {[]string{"tfyarn-evaluator"}, "tfyarn-chief", 0, 0},
	} {
		r := schedulingRequestProto(asks[typ])
		require.Equal(t, w.tags, r.GetAllocationTags(), "%s", typ)
		c := r.GetPlacementConstraint().GetSimpleConstraint()
		require.Equal(t, "node", c.GetScope())
		require.Equal(t, w.min, c.GetMinCardinality(), "%s", typ)
		require.Equal(t, w.max, c.GetMaxCardinality(), "%s", typ)
		require.Len(t, c.GetTargetExpressions(), 1, "%s: no partition without a label", typ)
		require.Equal(t, []string{w.target}, c.GetTargetExpressions()[0].GetTargetValues(), "%s", typ)
	}

	// Under --spread all the worker carries the cluster's tag and its own.
	// (The evaluator is not in the cluster, so not spread.)
	job.Spread, job.Affinities = "all", taskspec.Affinities{{Type: taskspec.Evaluator, Other: taskspec.Worker}}
	require.NoError(t, job.Validate(taskspec.ClusterLimits{}))
	m, err = core.New(core.Config{Job: job})
	require.NoError(t, err)
	for _, a := range m.AskTable() {
		if a.TaskType == taskspec.Worker {
			require.Equal(t, []string{"tfyarn-cluster", "tfyarn-worker"}, schedulingRequestProto(a).GetAllocationTags())
		}
	}
}
