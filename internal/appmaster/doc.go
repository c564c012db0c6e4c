// Package appmaster is tfyarn's ApplicationMaster process: the I/O loop
// that drives the pure core (package appmaster/core) against the
// ResourceManager and the NodeManagers, the tasks' rendezvous server and
// status page, and the AM's credentials. Every decision is the core's; this
// package only turns RPC answers and launcher reports into core events and
// the core's Ready into RPC calls.
package appmaster
