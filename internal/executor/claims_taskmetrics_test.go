package executor

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
)

// TestClaimsTaskMetricsREADME: README's "CPU and memory" paragraph names
// the sampling's times and the status fields as they are.
func TestClaimsTaskMetricsREADME(t *testing.T) {
	data, err := os.ReadFile("../../docs/logs-and-ui.md")
	require.NoError(t, err)
	readme := strings.Join(strings.Fields(string(data)), " ")
	require.Contains(t, readme, "1 s after the start, then every 10 s")
	require.Equal(t, time.Second, processFirst)
	require.Equal(t, 10*time.Second, processInterval)
	require.Contains(t, readme, "own high-water mark `VmHWM`")

	// The JSON names, as `status --output json` prints them per task.
	b, err := json.Marshal(contract.TaskReport{ProcessSample: &contract.ProcessSample{}, MemoryLimitBytes: 1, NearMemoryLimit: true, ProcessSampled: &time.Time{}})
	require.NoError(t, err)
	var keys map[string]any
	require.NoError(t, json.Unmarshal(b, &keys))
	for _, name := range []string{"cpu_percent", "cpu_seconds", "rss_bytes", "peak_rss_bytes", "processes", "process_sampled_at", "memory_limit_bytes", "near_memory_limit"} {
		require.Contains(t, keys, name)
		require.Contains(t, readme, "`"+name+"`")
	}
	b, err = json.Marshal(contract.TaskReport{})
	require.NoError(t, err)
	require.NotContains(t, string(b), "rss_bytes", "absent until the first sample")
}
