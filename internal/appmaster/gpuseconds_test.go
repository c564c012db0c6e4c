package appmaster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/contract"
)

// A sample stands for the time since the task's previous one, at most a
// minute: two GPUs at 50 % and 100 % for 10 s are 15 GPU-seconds.
func TestGPUSecondsSince(t *testing.T) {
	gpus := []contract.GPUSample{{UtilizationPct: 50}, {UtilizationPct: 100}}
	require.InDelta(t, 15.0, gpuSecondsSince(gpus, 10*time.Second), 1e-9)
	require.InDelta(t, 90.0, gpuSecondsSince(gpus, time.Hour), 1e-9, "a gap counts a minute at most")
	require.Zero(t, gpuSecondsSince(gpus, -time.Second))
}
