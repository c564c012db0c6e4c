package contract

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWarningLine(t *testing.T) {
	now := time.Date(2026, 11, 25, 21, 31, 7, 412_000_000, time.FixedZone("CET", 3600))
	by := now.Add(15 * time.Second)
	require.Equal(t, `{"kind":"preemption","time":"2026-11-25T20:31:07.412Z","time_unix_ms":1795638667412,"reason":"r","deadline":"2026-11-25T20:31:22.412Z","deadline_unix_ms":1795638682412,"task":"worker:0","container":"c2"}`+"\n",
		string(NewWarning(WarningPreemption, now, by, "r", "worker:0", "c2").Line()))
	require.Equal(t, `{"kind":"gpu-idle","time":"2026-11-25T20:31:07.412Z","time_unix_ms":1795638667412,"reason":"r","ends_at":"2026-11-25T20:31:22.412Z","ends_at_unix_ms":1795638682412,"task":"worker:0","container":"c2"}`+"\n",
		string(NewWarning(WarningGPUIdle, now, by, "r", "worker:0", "c2").Line()))
	require.Equal(t, `{"kind":"gpu-idle","time":"2026-11-25T20:31:07.412Z","time_unix_ms":1795638667412,"reason":"r","task":"worker:0","container":"c2"}`+"\n",
		string(NewWarning(WarningGPUIdle, now, time.Time{}, "r", "worker:0", "c2").Line()), "no end: --gpu-idle-action warn")
	require.Equal(t, "tfyarn-warnings-worker-0.jsonl", WarningsFileName("worker", 0))
	require.True(t, WarningGPUIdle.Known())
	require.False(t, WarningKind("fire").Known())
}
