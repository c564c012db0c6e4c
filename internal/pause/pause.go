// Package pause waits for a while unless a context ends first: the one
// context-aware sleep of retries, backoffs and periodic loops.
package pause

import (
	"context"
	"time"
)

// For waits d and returns nil, or returns ctx.Err() as soon as ctx ends if
// that is sooner. Unlike a select on time.After, it releases its timer then.
func For(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
