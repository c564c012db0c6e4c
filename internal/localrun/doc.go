// Package localrun is `tfyarn run --local`: the job's tasks as processes on
// this machine, met through the same rendezvous server, executor and
// TF_CONFIG code a YARN job uses, and decided by the ApplicationMaster's
// own core (package appmaster/core). What works locally therefore works the
// same way in containers, minus YARN: a user debugs a distributed script on
// a laptop and then submits it unchanged.
//
// Each task is an in-process executor (package executor) that runs the
// user's program as a child process; the program's output comes back line
// by line prefixed with its task ("[worker:1] ..."). A small driver plays
// the ResourceManager (every ask is allocated at once) and the
// NodeManagers (a launch starts a launcher) for the core, so the success
// rule, the stops after the decider, their escalation from a graceful stop
// to cancelling the launcher, and the final status are the AM's: the core's
// transcripts (appmaster/core/testdata) run against this driver too.
package localrun
