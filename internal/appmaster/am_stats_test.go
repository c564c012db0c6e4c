package appmaster

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseMemoryStats(t *testing.T) {
	status := "Name:\ttfyarn\nVmPeak:\t 1262348 kB\nVmHWM:\t   22544 kB\nVmRSS:\t   21112 kB\n" +
		"RssAnon:\t    6020 kB\nRssFile:\t   15092 kB\nRssShmem:\t       0 kB\nThreads:\t8\n"
	require.Equal(t, MemoryStats{PeakKiB: 22544, AnonKiB: 6020, FileKiB: 15092}, parseMemoryStats(strings.NewReader(status)))
	require.Equal(t, MemoryStats{}, parseMemoryStats(strings.NewReader("Name:\ttfyarn\n")))
}

// The test process's own figures: a running Go program has a heap and has
// its binary mapped, and its peak is at least what is resident now.
func TestReadMemoryStatsOfThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		require.Equal(t, MemoryStats{}, ReadMemoryStats())
		return
	}
	m := ReadMemoryStats()
	require.Positive(t, m.AnonKiB)
	require.Positive(t, m.FileKiB)
	require.GreaterOrEqual(t, m.PeakKiB, m.AnonKiB+m.FileKiB)
}
