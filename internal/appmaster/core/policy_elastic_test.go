package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// An elastic job's preempted worker restarts nothing else, not even the
// uncounted restart of YARN's exits: the others go on and decide the job;
// the lost worker alone is replaced (a new ask, no cluster restart), and
// the job may end before its replacement came: once a worker succeeded,
// the replacement is no longer asked for (elastic_alloc.go).
func TestElasticJobGoesOnWithoutALostWorker(t *testing.T) {
	job := taskspec.Job{Command: "python3", Framework: "pytorch", MinWorkers: 2, Tasks: []taskspec.TaskGroup{grp(taskspec.Worker, 3, small)}}
	policy, err := PolicyFor("", job)
	require.NoError(t, err)
	m, err := New(Config{Job: job, Policy: policy})
	require.NoError(t, err)
	step(m, Registered{})
	rd := step(m, Allocated{Containers: []Container{ctr(1, 1), ctr(2, 1), ctr(3, 1)}},
		ContainerStarted{ID: cid(1)}, ContainerStarted{ID: cid(2)}, ContainerStarted{ID: cid(3)})
	require.Len(t, rd.Launch, 3)
	lost := launchedTasks(rd)[cid(2)]

	rd = step(m, ContainerCompleted{ID: cid(2), ExitStatus: ExitPreempted})
	require.Nil(t, rd.Finish)
	require.Nil(t, rd.Restart)
	require.Len(t, rd.Asks, 1, "a replacement is asked for")
	require.Equal(t, taskspec.Worker, rd.Asks[0].TaskType)
	require.Empty(t, rd.Stop, "the others go on")
	require.Equal(t, 0, m.Restarts())

	rd = step(m, ContainerCompleted{ID: cid(1), ExitStatus: 0})
	require.Nil(t, rd.Finish)
	require.Len(t, rd.Asks, 1)
	require.Zero(t, rd.Asks[0].Count, "the replacement's ask withdrawn once a worker succeeded")
	rd = step(m, ContainerCompleted{ID: cid(3), ExitStatus: 0})
	require.NotNil(t, rd.Finish)
	require.Equal(t, Succeeded, rd.Finish.Status)
	require.Contains(t, rd.Finish.Diagnostics, "2 of 3 workers succeeded; lost on the way: "+lost.String()+" (1 vcores, ")
	require.Contains(t, rd.Finish.Diagnostics, "got no container before worker:0 succeeded")
	require.Contains(t, rd.Finish.Diagnostics, "; replaced after "+lost.String()+" (container "+cid(2))
}
