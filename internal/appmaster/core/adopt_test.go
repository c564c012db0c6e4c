package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// A later AM attempt that adopted nothing starts the tasks as a restart:
// Launch.Restart (TFYARN_RESTART) is 1, Restarts counts it, and the
// diagnostics say why, not counted against --max-restarts.
func TestAttemptRestartedCountsARestart(t *testing.T) {
	m := newMachine(t, nil, grp(taskspec.Worker, 1, small))
	step(m, Registered{})
	m.AttemptRestarted(2)
	rd := step(m, Allocated{Containers: []Container{ctr(1, 1)}})
	require.Len(t, rd.Launch, 1)
	require.Equal(t, 1, rd.Launch[0].Restart, "TFYARN_RESTART")
	require.Equal(t, 1, m.Restarts())
	rd = step(m, ContainerStarted{ID: cid(1)}, ContainerCompleted{ID: cid(1), ExitStatus: 0})
	require.NotNil(t, rd.Finish)
	require.Equal(t, Succeeded, rd.Finish.Status)
	require.Contains(t, rd.Finish.Diagnostics, "restart 1 after ApplicationMaster attempt 1 ended and its tasks could not be adopted (not counted: not the program's fault)")
}
