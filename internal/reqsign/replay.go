package reqsign

import (
	"sync"
	"time"
)

// replayCache remembers the nonces of accepted requests for as long as
// their timestamps stay inside the skew window; after that the timestamp
// check alone refuses them, so the cache can forget.
type replayCache struct {
	mu        sync.Mutex
	seen      map[string]time.Time // nonce → when it may be forgotten
	max       int
	nextPrune time.Time
}

func newReplayCache(max int) *replayCache {
	return &replayCache{seen: map[string]time.Time{}, max: max}
}

// ErrReplay and ErrCacheFull are the two ways a correctly signed, timely
// request is refused for its nonce.
var (
	ErrReplay    error = &Error{"replayed request (nonce already used)"}
	ErrCacheFull error = &Error{"too many requests in the replay window; try again"}
)

// add records nonce until forgetAt. It refuses a nonce it holds, and a new
// one when full: refusing is safe (the signer retries with a new nonce),
// forgetting early would let a replay through.
func (c *replayCache) add(nonce string, now, forgetAt time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !now.Before(c.nextPrune) || len(c.seen) >= c.max {
		c.prune(now)
		c.nextPrune = now.Add(time.Minute)
	}
	if _, ok := c.seen[nonce]; ok {
		return ErrReplay
	}
	if len(c.seen) >= c.max {
		return ErrCacheFull
	}
	c.seen[nonce] = forgetAt
	return nil
}

func (c *replayCache) prune(now time.Time) {
	for n, t := range c.seen {
		if now.After(t) {
			delete(c.seen, n)
		}
	}
}
