package clustertest

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSubtests: at most width run at once, started in the order given; width 0 runs them all at
// once; every one has ended when Subtests returns.
func TestSubtests(t *testing.T) {
	tests := strings.Join(strings.Fields(DocSection(t, "## Tests")), " ")
	require.Contains(t, tests, "run through `clustertest.Subtests`: at most the width it is given at once, started in the order given.")
	require.Contains(t, tests, "which is GOMAXPROCS (two on a 2-core machine)")
	for _, tc := range []struct {
		width, want int
	}{{2, 2}, {0, 4}, {9, 4}} {
		var mu sync.Mutex
		running, most := 0, 0
		var started, ended []string
		body := func(name string) Subtest {
			return Subtest{Name: name, Run: func(t *testing.T) {
				mu.Lock()
				started = append(started, name)
				running++
				most = max(most, running)
				mu.Unlock()
				time.Sleep(50 * time.Millisecond)
				mu.Lock()
				running--
				ended = append(ended, name)
				mu.Unlock()
			}}
		}
		Subtests(t, tc.width, body("a"), body("b"), body("c"), body("d"))
		require.Equal(t, tc.want, most, "width %d", tc.width)
		require.Len(t, ended, 4, "width %d: all ended when Subtests returned", tc.width)
		if tc.width == 2 {
			require.Equal(t, []string{"a", "b"}, sortedPair(started[:2]), "the first two given start first")
		}
	}
}

func sortedPair(s []string) []string {
	if s[0] > s[1] {
		return []string{s[1], s[0]}
	}
	return []string{s[0], s[1]}
}
