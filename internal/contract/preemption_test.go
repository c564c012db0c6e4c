package contract

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPreemptionWarningLine(t *testing.T) {
	at := time.Date(2026, 11, 25, 21, 31, 7, 412_000_000, time.FixedZone("CET", 3600))
	line := NewPreemptionWarning(at, "YARN's scheduler will preempt container c2", "worker:0", "c2").Line()
	require.Equal(t, `{"deadline":"2026-11-25T20:31:07.412Z","deadline_unix_ms":1795638667412,"reason":"YARN's scheduler will preempt container c2","task":"worker:0","container":"c2"}`+"\n", string(line))
	var back map[string]any
	require.NoError(t, json.Unmarshal(line, &back))
	parsed, err := time.Parse(time.RFC3339, back["deadline"].(string))
	require.NoError(t, err)
	require.Equal(t, at.UnixMilli(), parsed.UnixMilli())
	require.EqualValues(t, at.UnixMilli(), back["deadline_unix_ms"])
	require.Equal(t, "tfyarn-preemption-worker-0.json", PreemptionFileName("worker", 0))
}
