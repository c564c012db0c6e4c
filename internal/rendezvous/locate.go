package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// Locator finds the current AM's rendezvous address ("host:port"): a
// later AM attempt (--am-attempts) runs elsewhere, and tells the launchers
// of the tasks it adopts where (package amattempt: a launcher's control
// port).
type Locator func(ctx context.Context) (string, error)

// LocatorConfig is how a client looks for a new AM once it lost its own.
type LocatorConfig struct {
	Locate Locator
	// Where names what Locate reads, for the messages.
	Where string
	// After is how long the AM stays unreachable (refused connections,
	// timeouts, 5xx) before the client looks for another.
	After time.Duration
	// Every spaces the lookups.
	Every time.Duration
	// GiveUp is how long the client goes without any AM before every call
	// fails with an error saying what it waited for.
	GiveUp time.Duration
	// Moved, when set, is told each move and how registering again there
	// went (nil error: registered, or nothing registered yet).
	Moved func(addr string, err error)
}

// ErrAMLost: the client found no AM within LocatorConfig.GiveUp.
var ErrAMLost = errors.New("lost the AM")

// lookupTimeout bounds one Locate call.
const lookupTimeout = 30 * time.Second

// WithLocator makes the client follow its AM to a new address (see
// LocatorConfig); after a move it registers again there with the last
// registration it made, so the new AM hears from it.
func WithLocator(lc LocatorConfig) ClientOption {
	return func(c *Client) {
		if lc.After <= 0 {
			lc.After = 10 * time.Second
		}
		if lc.Every <= 0 {
			lc.Every = 5 * time.Second
		}
		if lc.GiveUp < lc.After {
			lc.GiveUp = lc.After
		}
		c.loc = &lc
	}
}

// Address is the AM's address the client talks to now ("host:port").
func (c *Client) Address() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base[len("http://"):]
}

// reached records an answer from the AM at base.
func (c *Client) reached(base string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.base == base {
		c.failingSince = time.Time{}
	}
}

// unreachable is called after an attempt against base, begun at started,
// failed: it looks for a new AM when the one at base has not answered for
// long enough, moves there and registers again. An error means the client
// gave up. The AM counts as silent from the start of the first failed
// attempt: one black-holed long poll already lasts longer than
// LocatorConfig.After.
func (c *Client) unreachable(ctx context.Context, base string, started time.Time, cause error) error {
	if c.loc == nil {
		return nil
	}
	now := c.now()
	c.mu.Lock()
	if c.gaveUp != nil {
		c.mu.Unlock()
		return c.gaveUp
	}
	if c.base != base {
		c.mu.Unlock()
		return nil // another call moved already: retry there
	}
	if c.failingSince.IsZero() {
		c.failingSince = started
	}
	since := c.failingSince
	if now.Sub(since) >= c.loc.GiveUp {
		c.gaveUp = fmt.Errorf("%w: the AM at %s has not answered for %s and %s named no other AM (last error: %v; last lookup: %s)",
			ErrAMLost, base[len("http://"):], c.loc.GiveUp, c.loc.Where, cause, c.lookupResult())
		c.mu.Unlock()
		return c.gaveUp
	}
	if now.Sub(since) < c.loc.After || (!c.lastLookup.IsZero() && now.Sub(c.lastLookup) < c.loc.Every) {
		c.mu.Unlock()
		return nil
	}
	c.lastLookup = now
	c.mu.Unlock()

	lctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	addr, err := c.loc.Locate(lctx)
	cancel()
	if err == nil {
		if _, _, err = net.SplitHostPort(addr); err != nil {
			err = fmt.Errorf("AM address %q: %w", addr, err)
		}
	}
	c.mu.Lock()
	c.looked, c.lookupErr = true, err
	if err != nil || "http://"+addr == c.base || c.base != base {
		c.mu.Unlock()
		return nil
	}
	c.base = "http://" + addr
	c.failingSince = time.Time{}
	reg := c.reg
	c.mu.Unlock()

	var rerr error
	if reg != nil {
		rerr = c.Register(ctx, *reg)
	}
	if c.loc.Moved != nil {
		c.loc.Moved(addr, rerr)
	}
	return nil
}

// lookupResult says how the last lookup went. Called with c.mu held.
func (c *Client) lookupResult() string {
	switch {
	case !c.looked:
		return "none made"
	case c.lookupErr != nil:
		return c.lookupErr.Error()
	default:
		return "the same address"
	}
}
