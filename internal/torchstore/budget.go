package torchstore

import (
	"fmt"
	"sync"
	"time"
)

// budget bounds the bytes allocated for requests being read, shared by
// every connection. A connection that would exceed it waits for bytes to be
// given back, until its request's deadline; then it is dropped. Waiting
// (rather than dropping at once) keeps a torch client working while a
// flood holds the budget: the flood's requests reach their deadline and
// give their bytes back.
type budget struct {
	mu    sync.Mutex
	size  int
	free  int
	freed chan struct{} // closed (and replaced) when bytes are given back
}

func newBudget(size int) *budget {
	return &budget{size: size, free: size, freed: make(chan struct{})}
}

// take takes n bytes, waiting until deadline for them.
func (b *budget) take(n int, deadline time.Time) error {
	if n > b.size {
		return fmt.Errorf("a request needs more than the store's %d bytes for requests being read", b.size)
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		b.mu.Lock()
		if n <= b.free {
			b.free -= n
			b.mu.Unlock()
			return nil
		}
		freed := b.freed
		b.mu.Unlock()
		wait := time.Until(deadline)
		if wait <= 0 {
			return fmt.Errorf("the store's %d bytes for requests being read stayed spent until the request's deadline", b.size)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		}
		select {
		case <-freed:
		case <-timer.C:
			timer = nil
		}
	}
}

// give gives n bytes back.
func (b *budget) give(n int) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.free += n
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// inUse answers the bytes taken.
func (b *budget) inUse() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.size - b.free
}
