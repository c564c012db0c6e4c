//go:build bench

package rendezvous

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchRendezvousScale is the rendezvous of a job of N workers as the
// ApplicationMaster serves it (its connlimit bounds: rendezvous.
// MaxUnauthenticatedConns strangers, max(DefaultMaxAuthenticatedConns,
// 8×N) launchers), with N simulated launchers over loopback, each one
// Client as `tfyarn task` makes it: register, then long-poll the spec,
// all at once. It measures the time to all registered and to every spec
// received, the connections evicted, and the process's CPU and heap.
// bench/results/scale-sim.md; BENCH_RDV_TASKS="1000 5000" by default.
//
//	go test -tags bench -run TestBenchRendezvousScale -v ./internal/rendezvous/
func TestBenchRendezvousScale(t *testing.T) {
	sizes := []int{1000, 5000}
	if s := os.Getenv("BENCH_RDV_TASKS"); s != "" {
		sizes = nil
		for _, f := range strings.Fields(s) {
			n, err := strconv.Atoi(f)
			require.NoError(t, err)
			sizes = append(sizes, n)
		}
	}
	t.Logf("load before: %s", loadAvg1())
	for _, n := range sizes {
		r := rendezvousAtScale(t, n)
		t.Logf("tasks=%d all_registered=%.2fs all_specs=%.2fs spec_bytes=%d evicted=%d cpu=%.2fs heap_peak_mib=%.1f goroutines_peak=%d load=%s",
			n, r.registered.Seconds(), r.specs.Seconds(), r.specBytes, r.evicted, r.cpu.Seconds(), r.heapPeakMiB, r.goroutinesPeak, loadAvg1())
	}
}

func loadAvg1() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
