package yarn

import (
	"testing"
	"time"
)

// Unregistering polls from 20ms, doubling to 2s: the RM usually
// unregisters within tens of milliseconds, and every job's wall time
// waits for the first pause. FinishBackoff overrides the first pause.
func TestFinishPauseSchedule(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		opts AMOptions
		want []time.Duration
	}{
		{AMOptions{}, []time.Duration{20 * ms, 40 * ms, 80 * ms, 160 * ms, 320 * ms, 640 * ms, 1280 * ms, 2 * time.Second, 2 * time.Second}},
		{AMOptions{FinishBackoff: 300 * ms}, []time.Duration{300 * ms, 600 * ms, 1200 * ms, 2 * time.Second}},
	} {
		for i, want := range tc.want {
			if got := tc.opts.finishPause(i); got != want {
				t.Errorf("FinishBackoff %s: pause %d is %s, want %s", tc.opts.FinishBackoff, i, got, want)
			}
		}
	}
}
