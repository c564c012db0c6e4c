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
		m, err := New(Config{Job: job(spread), WorkersInPlace: true})
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
	require.Equal(t, "the ResourceManager refused the worker request: its yarn.resourcemanager.placement-constraints.handler does not place SchedulingRequests, which --spread, --colocate and --apart send; the cluster's administrator must set it to scheduler, or run without them (YarnException)", got)
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

// A worker placed by or for another type (--colocate, --apart) is not
// replaced in place either: its replacement's ResourceRequest would carry
// no allocation tag.
func TestAffinityWorkerNotInPlace(t *testing.T) {
	job := func(as taskspec.Affinities) taskspec.Job {
		return taskspec.Job{Affinities: as, Tasks: []taskspec.TaskGroup{
			{Type: taskspec.Chief, Instances: 1, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 1}},
			{Type: taskspec.Worker, Instances: 2, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 1}},
			{Type: taskspec.PS, Instances: 1, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 1}},
		}}
	}
	failed := &TaskStatus{Task: taskspec.TaskID{Type: taskspec.Worker, Index: 1}, Port: 2222, ExitStatus: 1}
	for _, tc := range []struct {
		as   taskspec.Affinities
		want bool
	}{
		{nil, true},
		{taskspec.Affinities{{Type: taskspec.PS, Other: taskspec.Chief}}, true},
		{taskspec.Affinities{{Type: taskspec.PS, Other: taskspec.Worker}}, false},
		{taskspec.Affinities{{Type: taskspec.Worker, Other: taskspec.PS, Apart: true}}, false},
	} {
		m, err := New(Config{Job: job(tc.as), WorkersInPlace: true})
		require.NoError(t, err)
		require.Equal(t, tc.want, m.inPlace(failed), "%v", tc.as)
	}
}

// A colocated ps that finds no worker's node with room ends by the
// allocation deadline naming the constraint; the workers' ask carries
// their tag, the ps's the constraint.
func TestAllocDeadlineNamesAffinity(t *testing.T) {
	r := taskspec.Resources{VCores: 1, MemoryMiB: 256}
	colocate := taskspec.Affinity{Type: taskspec.PS, Other: taskspec.Worker}
	m, err := New(Config{Job: taskspec.Job{Command: "true", Affinities: taskspec.Affinities{colocate},
		Tasks: []taskspec.TaskGroup{grp(taskspec.Worker, 1, r), grp(taskspec.PS, 1, r)}},
		ClusterOffers: map[string]string{"": offerDefault}})
	require.NoError(t, err)
	rd := step(m, Tick{Now: at0}, Registered{})
	require.Equal(t, []Ask{
		{TaskType: taskspec.Worker, AllocationRequestID: 1, Priority: 1, Resource: r, Count: 1, AffinityTag: "tfyarn-worker"},
		{TaskType: taskspec.PS, AllocationRequestID: 2, Priority: 2, Resource: r, Count: 1, AffinityTag: "tfyarn-ps", Affinity: colocate},
	}, rd.Asks)
	step(m, Allocated{Containers: []Container{ctr(1, 1)}}, ContainerStarted{ID: cid(1)})
	rd = step(m, Tick{Now: at0.Add(taskspec.DefaultAllocTimeout)})
	require.NotNil(t, rd.Finish)
	require.Equal(t, Finish{Status: Failed, Diagnostics: `ps:0 (1 vcores, 256 MiB, label "") was not allocated within 5m0s: ` + offerDefault +
		`; placement constraint each ps task on a node running a worker task (--colocate ps=worker): each needs a node with room that runs a worker task; ask for less, drop --colocate or raise --alloc-timeout`}, *rd.Finish)
}

// A placed job's cluster restart asks again only once the RM has reported
// the old containers complete: until then their allocation tags stay on
// their nodes, and a --colocate ps could be placed beside an old worker
// that is ending. The launchers' reports end the tasks first.
func TestRestartWaitsForTagsReleased(t *testing.T) {
	r := taskspec.Resources{VCores: 1, MemoryMiB: 1}
	m, err := New(Config{Job: taskspec.Job{Command: "true", Restarts: taskspec.RestartPolicy{Max: 1},
		Affinities: taskspec.Affinities{{Type: taskspec.PS, Other: taskspec.Worker}},
		Tasks:      []taskspec.TaskGroup{grp(taskspec.Worker, 2, r), grp(taskspec.PS, 1, r)}}})
	require.NoError(t, err)
	rd := step(m, Tick{Now: at0}, Registered{})
	require.Len(t, rd.Asks, 2)
	var cs []Container
	for i, a := range rd.Asks {
		for j := 0; j < a.Count; j++ {
			cs = append(cs, ctr(len(cs)+1, rd.Asks[i].AllocationRequestID))
		}
	}
	rd = step(m, Allocated{Containers: cs})
	require.Len(t, rd.Launch, 3)
	for _, c := range cs {
		step(m, ContainerStarted{ID: c.ID})
	}
	// worker:1's program fails; the others end on the restart's stop. All
	// three launchers report before the RM does.
	rd = step(m, ContainerCompleted{ID: cs[1].ID, ExitStatus: 3, ByLauncher: true})
	require.Len(t, rd.Stop, 2)
	rd = step(m, ContainerCompleted{ID: cs[0].ID, ExitStatus: 143, ByLauncher: true}, ContainerCompleted{ID: cs[2].ID, ExitStatus: 143, ByLauncher: true})
	require.Nil(t, rd.Restart, "no restart while the RM holds the old containers")
	require.Empty(t, rd.Asks)
	rd = step(m, ContainerCompleted{ID: cs[0].ID, ExitStatus: 143}, ContainerCompleted{ID: cs[1].ID, ExitStatus: 3})
	require.Nil(t, rd.Restart, "ps:0's container is still the RM's")
	rd = step(m, ContainerCompleted{ID: cs[2].ID, ExitStatus: 143})
	require.Equal(t, &Restart{Number: 1}, rd.Restart)
	require.Len(t, rd.Asks, 2)
}
