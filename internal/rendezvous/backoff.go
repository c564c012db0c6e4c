package rendezvous

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/tfyarn/tfyarn/internal/pause"
)

// backoff spaces retries: first, doubling up to max, each pause drawn from
// [d/2, d] so that launchers started together do not retry in lockstep.
type backoff struct{ first, max time.Duration }

func (b backoff) delay(attempt int) time.Duration {
	d := b.first
	for i := 1; i < attempt && d < b.max; i++ {
		d *= 2
	}
	if d > b.max {
		d = b.max
	}
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

func (b backoff) sleep(ctx context.Context, attempt int) error {
	return pause.For(ctx, b.delay(attempt))
}
