package executor

import (
	"context"
	"errors"
	"time"
)

// handoffPoll is how often the socket table is read while waiting for the
// program's listener: cheap, and TensorFlow takes seconds to start anyway.
const handoffPoll = 100 * time.Millisecond

// handOffPort keeps the reservation until the program listens on the port
// itself, then releases it; without /proc it waits for fallback instead.
// It gives up quietly when the program ends first (Run releases then).
func handOffPort(ctx context.Context, res *Reservation, programDone <-chan struct{}, fallback time.Duration, log *logger) {
	tick := time.NewTicker(handoffPoll)
	defer tick.Stop()
	deadline := time.NewTimer(fallback)
	defer deadline.Stop()
	for {
		ok, err := listening(res.Port)
		if ok {
			_ = res.Release()
			log.printf("the program listens on port %d: released the reservation", res.Port)
			return
		}
		if errors.Is(err, errNoProcNet) {
			tick.Stop() // nothing to poll; wait for the fallback
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			_ = res.Release()
			log.printf("released the reservation of port %d after %s without seeing the program listen on it", res.Port, fallback)
			return
		case <-programDone:
			return
		case <-ctx.Done():
			return
		}
	}
}
