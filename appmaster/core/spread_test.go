package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// A spread ParameterServerStrategy worker is not replaced in place (its
// replacement could not keep the constraint): it restarts with the cluster.
func TestSpreadWorkerNotInPlace(t *testing.T) {
	job := func(spread string) taskspec.Job {
		return taskspec.Job{Spread: spread, Tasks: []taskspec.TaskGroup{
			{Type: taskspec.Chief, Instances: 1, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 1}},
			{Type: taskspec.Worker, Instances: 2, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 1}},
			{Type: taskspec.PS, Instances: 1, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 1}},
		}}
	}
	failed := &TaskStatus{Task: taskspec.TaskID{Type: taskspec.Worker, Index: 1}, Port: 2222, ExitStatus: 1}
	for spread, want := range map[string]bool{"": true, "ps": true, "worker": false, "all": false} {
		m, err := New(Config{Job: job(spread)})
		require.NoError(t, err)
		require.Equal(t, want, m.inPlace(failed), "--spread %q", spread)
	}
}

// An RM that does not place SchedulingRequests says so with a bare
// YarnException; the diagnostics name the setting and what to do.
func TestRefusalDiagnosticsPlacementHandler(t *testing.T) {
	got := RefusalDiagnostics(RequestRefused{
		Asks:      []Ask{{TaskType: taskspec.Worker, Count: 2, SpreadTag: "tfyarn-worker"}},
		Exception: "org.apache.hadoop.yarn.exceptions.YarnException",
		Message:   "Found non empty SchedulingRequest in AllocateRequest for application=appattempt_1_0001_000001, but the configured yarn.resourcemanager.placement-constraints.handler cannot handle placement constraints. Rejecting this allocate operation",
	})
	require.Equal(t, "the ResourceManager refused the worker request: its yarn.resourcemanager.placement-constraints.handler does not place SchedulingRequests, which --spread sends; the cluster's administrator must set it to scheduler, or run without --spread (YarnException)", got)
}

// A spread that cannot be held now (two of three workers placed, no third
// node free of one) ends by the allocation deadline naming the constraint.
func TestAllocDeadlineNamesSpread(t *testing.T) {
	w := taskspec.Resources{VCores: 1, MemoryMiB: 256}
	m, err := New(Config{Job: taskspec.Job{Command: "true", Spread: "worker", Tasks: []taskspec.TaskGroup{grp(taskspec.Worker, 3, w)}},
		ClusterOffers: map[string]string{"": offerDefault}})
	require.NoError(t, err)
	rd := step(m, Tick{Now: at0}, Registered{})
	require.Equal(t, []Ask{{TaskType: taskspec.Worker, AllocationRequestID: 1, Priority: 1, Resource: w, Count: 3, SpreadTag: "tfyarn-worker"}}, rd.Asks)
	step(m, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 1)}}, ContainerStarted{ID: cid(1)}, ContainerStarted{ID: cid(2)})
	rd = step(m, Tick{Now: at0.Add(taskspec.DefaultAllocTimeout)})
	require.NotNil(t, rd.Finish)
	require.Equal(t, Finish{Status: Failed, Diagnostics: `worker:2 (1 vcores, 256 MiB, label "") was not allocated within 5m0s: ` + offerDefault +
		`; placement constraint no two worker tasks on one node (--spread worker): each of the 3 spread tasks needs a node of its own; ask for fewer tasks, drop --spread or raise --alloc-timeout`}, *rd.Finish)
}
