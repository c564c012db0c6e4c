package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Which ends count against a node: those a node can cause.
func TestNodeFaults(t *testing.T) {
	for status, counts := range map[int32]bool{
		1: true, 137: true, ExitInvalid: true, ExitAborted: true, ExitDisksFailed: true,
		ExitPreempted: false, ExitKilledByResourceManager: false, ExitKilledByContainerScheduler: false,
		ExitKilledAfterAppCompletion: false, ExitKilledByAppMaster: false, ExitKilledExceededPMem: false, ExitKilledExceededVMem: false,
	} {
		require.Equal(t, counts, nodeFault(status), "exit status %d", status)
	}
}

// --max-node-failures: the threshold, per job, and 0 (NoNodeExclusion) for
// never.
func TestNodeFailureThreshold(t *testing.T) {
	for _, tc := range []struct {
		max, failures, wantExcluded int
	}{
		{0, 1, 0}, {0, 2, 1}, {1, 1, 1}, {3, 2, 0}, {3, 3, 1}, {taskspec.NoNodeExclusion, 5, 0},
	} {
		m := restartMachine(t, taskspec.RestartPolicy{Max: 10})
		m.job.MaxNodeFailures = tc.max
		n := 1
		for range tc.failures {
			if len(m.ExcludedNodes()) > 0 {
				break
			}
			runOnce(t, m, n)
			failWorker(m, n, 1)
			n += 6 // the worker's container stays on node2 (ctr)
		}
		require.Len(t, m.ExcludedNodes(), tc.wantExcluded, "--max-node-failures %d after %d failures", tc.max, tc.failures)
		if tc.wantExcluded > 0 {
			r := m.RestartRecord()
			require.Equal(t, m.ExcludedNodes(), r.Excluded, "the next attempt takes the exclusions over")
			require.Equal(t, "node2", r.Excluded[0].Host)
		}
	}
}
