package executor

import (
	"time"

	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
)

// Bounds of the search for a new AM (Config.Locate).
const (
	// DefaultAMLostAfter: an AM that has not answered this long is looked
	// for elsewhere.
	DefaultAMLostAfter = 10 * time.Second
	// DefaultAMLostTimeout: without any AM for this long the launcher stops
	// looking, says so, and leaves its program running (YARN still stops
	// the container when the job ends). It covers YARN noticing a lost
	// node (yarn.nm.liveness-monitor.expiry-interval-ms, 10 minutes by
	// default) and starting the next attempt.
	DefaultAMLostTimeout = 15 * time.Minute
)

// listenForLaterAttempts opens the control port on which a later AM
// attempt that adopts this task names its address (package amattempt), when
// the job allows later attempts (Config.AMAttempt) and no Locate is set,
// and makes it the launcher's Locate. Without the port the launcher still
// runs: only an attempt that re-takes the old address reaches it then.
func listenForLaterAttempts(cfg *Config, log *logger) *amattempt.Listener {
	if cfg.AMAttempt < 1 || cfg.Locate != nil {
		return nil
	}
	ctl, err := amattempt.Listen(amattempt.ListenConfig{
		Host: cfg.Host, ContainerID: cfg.ContainerID, Key: cfg.Secret, Attempt: cfg.AMAttempt, Logf: log.printf,
	})
	if err != nil {
		log.printf("no control port for a later AM attempt (%v): only one at the same address reaches this launcher", err)
		return nil
	}
	cfg.Locate, cfg.LocateWhere = ctl.Locate, ctl.Where()
	return ctl
}

// locatorOption is the rendezvous client's locator for cfg, nil without
// one.
func locatorOption(cfg *Config, log *logger) rendezvous.ClientOption {
	if cfg.Locate == nil {
		return nil
	}
	return rendezvous.WithLocator(rendezvous.LocatorConfig{
		Locate: cfg.Locate,
		Where:  cfg.LocateWhere,
		After:  cfg.AMLostAfter,
		GiveUp: cfg.AMLostTimeout,
		Moved: func(addr string, err error) {
			if err != nil {
				log.printf("the AM moved to %s (found in %s); registering there again failed: %v", addr, cfg.LocateWhere, err)
				return
			}
			log.printf("the AM moved to %s (found in %s): registered there again", addr, cfg.LocateWhere)
		},
	})
}
