package core

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/taskspec"
)

// A program killed from outside: YARN's report of the container, when it
// comes within taskspec.YarnReasonWait, gives the reason; otherwise the
// launcher's exit code stands once the wait is over. Nothing waits forever.
func TestProgramSignalledWaitsForYarnsReason(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		name    string
		after   []Event // after the launcher's report
		ended   bool
		failure string
	}{
		{"YARN reports the memory kill", []Event{
			Tick{Now: t0.Add(2 * time.Second)},
			ContainerCompleted{ID: cid(1), ExitStatus: ExitKilledExceededPMem, Diagnostics: "Container is running beyond the 'PHYSICAL' memory limit."},
		}, true, "killed for exceeding its physical memory limit"},
		{"still waiting just before the bound", []Event{
			Tick{Now: t0.Add(taskspec.YarnReasonWait - time.Second)},
		}, false, ""},
		{"no report from YARN: the exit code stands", []Event{
			Tick{Now: t0.Add(taskspec.YarnReasonWait)},
		}, true, "failed: exit code 143 (SIGTERM)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine(t, nil, grp(taskspec.Worker, 1, small))
			step(m, Tick{Now: t0}, Registered{}, Allocated{Containers: []Container{ctr(1, 1)}}, ContainerStarted{ID: cid(1)})
			rd := step(m, ProgramSignalled{ID: cid(1), ExitStatus: 143, Diagnostics: "the program exited with code 143 after SIGTERM from outside"})
			require.Nil(t, rd.Finish, "the launcher's report alone decides nothing")
			rd = step(m, tc.after...)
			if !tc.ended {
				require.Nil(t, rd.Finish)
				require.Equal(t, TaskRunning, m.Tasks()[0].State)
				return
			}
			require.NotNil(t, rd.Finish)
			require.Equal(t, Failed, rd.Finish.Status)
			require.True(t, strings.Contains(rd.Finish.Diagnostics, tc.failure), rd.Finish.Diagnostics)
		})
	}
}
