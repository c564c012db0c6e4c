package taskspec

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestClaimsREADMEDefaults pins the numbers README.md states. Other tests
// use these constants by name, so a changed default would pass them while
// the README turned false; this one fails instead (change both together).
func TestClaimsREADMEDefaults(t *testing.T) {
	// "`8x4c` eight tasks of 4 vcores and the default 2 GiB"
	g, err := ParseSpec(Worker, "8x4c")
	require.NoError(t, err)
	require.Equal(t, TaskGroup{Type: Worker, Instances: 8, Resources: Resources{VCores: 4, MemoryMiB: 2048}}, g)

	for _, c := range []struct {
		readme string
		got    time.Duration
		want   time.Duration
	}{
		{"`--alloc-timeout` (default 5m, from the AM's start)", DefaultAllocTimeout, 5 * time.Minute},
		{"they get a 10-second grace", DefaultWorkerGrace, 10 * time.Second},
		{"Every stopped task is waited for at most 15 s", TFStopTimeout, 15 * time.Second},
		{"if ... no container comes there within a minute, the whole cluster restarts", InPlaceWait, time.Minute},
	} {
		require.Equal(t, c.want, c.got, c.readme)
	}
	// "so the application ends within 30 s of the decider's exit": the
	// core finishes at the latest grace + stop timeout after the decider.
	require.LessOrEqual(t, DefaultWorkerGrace+TFStopTimeout, 30*time.Second)

	// "at most 10 times in a job (the next one fails it)"
	require.Equal(t, 10, MaxUncountedRestarts)
}
