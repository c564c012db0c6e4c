package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
)

// An AM that takes no metrics (--local's rendezvous, an older AM) ends the
// sampling without a word; any other failure is said once while sampling
// goes on.
func TestSampleProcessesSending(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		wantSends int32 // at least
		wantLog   string
	}{
		{"not served", fmt.Errorf("reporting the metrics of worker:0: %w", rendezvous.ErrNotServed), 1, ""},
		{"busy AM", errors.New("AM did not answer"), 5, "could not report CPU and memory metrics to the AM: AM did not answer\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var sends atomic.Int32
			var out bytes.Buffer
			log := &logger{w: &out}
			done := make(chan struct{})
			go func() {
				defer close(done)
				sampleProcesses(ctx, newTreeSampler("no-such-mark", 0, time.Now()), time.Millisecond, time.Millisecond,
					func(context.Context, contract.ProcessSample) error { sends.Add(1); return tc.err }, log)
			}()
			for deadline := time.Now().Add(10 * time.Second); sends.Load() < tc.wantSends; time.Sleep(time.Millisecond) {
				require.True(t, time.Now().Before(deadline), "only %d reports in 10 s", sends.Load())
			}
			if tc.wantLog == "" {
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatal("sampling went on after the AM said it takes no metrics")
				}
				require.Equal(t, int32(1), sends.Load())
			} else {
				cancel()
				<-done
			}
			log.mu.Lock()
			defer log.mu.Unlock()
			require.Equal(t, tc.wantLog, out.String())
			require.LessOrEqual(t, strings.Count(out.String(), "\n"), 1)
		})
	}
}
