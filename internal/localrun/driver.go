package localrun

import (
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/internal/success"
	"github.com/tfyarn/tfyarn/taskspec"
)

// procs is what the driver needs of the tasks' launchers: local processes
// in Run, a recording fake in the transcript tests. Containers are the
// driver's names for one launcher run of a task ("local-1", ...): a
// restart runs the task again in a new one.
type procs interface {
	// start runs ln's task in its container; its end comes back through
	// driver.exited.
	start(ln core.Launch)
	// stop asks the task's launcher to end its program (SIGTERM, then
	// SIGKILL after its grace): the core's graceful stop.
	stop(s core.Stop)
	// kill cancels the container's launcher, which ends the program
	// itself: the core's hard stop.
	kill(s core.Stop)
	// over tells launchers still waiting for the cluster spec that the job
	// is over.
	over(f core.Finish)
	// restart starts a new rendezvous generation: the cluster starts again
	// with new addresses.
	restart(r core.Restart)
}

// driver drives the ApplicationMaster's core (package appmaster/core)
// with local processes: the one success rule, the same stops and their
// escalation, the same final status as on YARN. It plays the
// ResourceManager by allocating every ask at once, and the NodeManagers by
// starting each launch as a process.
type driver struct {
	m     *core.Machine
	p     procs
	next  int                        // containers named so far
	live  map[string]taskspec.TaskID // containers whose launcher has not ended
	codes map[taskspec.TaskID]int    // latest launcher exit code per task
	ended map[taskspec.TaskID]time.Time
	fin   *core.Finish
}

// newDriver builds the core for job with the success rule and timings of
// opts: ProgramStopGrace (the program's SIGTERM-to-SIGKILL grace) plus a
// margin is how long a stopped task has before its launcher is cancelled.
func newDriver(job taskspec.Job, opts Options, p procs) (*driver, error) {
	policy, err := frameworks.PolicyFor(opts.Success, job)
	if err != nil {
		return nil, fmt.Errorf("localrun: %w", err)
	}
	policy = success.WithWorkerGrace(policy, opts.WorkerGrace)
	m, err := core.New(core.Config{
		Job:                job,
		Policy:             policy,
		WorkersInPlace:     frameworks.WorkersReplacedInPlace(job),
		AllocTimeout:       -1, // allocation is immediate
		ContainerStopGrace: opts.ProgramStopGrace + stuckMargin,
	})
	if err != nil {
		return nil, fmt.Errorf("localrun: %w", err)
	}
	return &driver{m: m, p: p, live: map[string]taskspec.TaskID{}, codes: map[taskspec.TaskID]int{}, ended: map[taskspec.TaskID]time.Time{}}, nil
}

// begin starts the job at now.
func (d *driver) begin(now time.Time) {
	d.step(core.Tick{Now: now}, core.Registered{})
}

// step feeds the core and carries out what it wants done, until it wants
// nothing more.
func (d *driver) step(evs ...core.Event) {
	for _, ev := range evs {
		d.m.Step(ev)
	}
	for d.m.HasReady() {
		rd := d.m.Ready()
		if rd.Restart != nil {
			d.p.restart(*rd.Restart)
		}
		var started []core.Event
		for _, ln := range rd.Launch {
			d.live[ln.Container.ID] = ln.Task
			d.p.start(ln)
			started = append(started, core.ContainerStarted{ID: ln.Container.ID})
		}
		for _, s := range rd.Stop {
			if s.Hard {
				d.p.kill(s)
			} else {
				d.p.stop(s)
			}
		}
		if rd.Finish != nil {
			d.fin = rd.Finish
			d.p.over(*rd.Finish)
		}
		var got []core.Container
		for _, a := range rd.Asks {
			for range a.Count {
				d.next++
				got = append(got, core.Container{
					ID:                  fmt.Sprintf("local-%d", d.next),
					Resource:            a.Resource,
					AllocationRequestID: a.AllocationRequestID,
					Priority:            a.Priority,
				})
			}
		}
		if len(got) > 0 {
			d.m.Step(core.Allocated{Containers: got})
		}
		for _, ev := range started {
			d.m.Step(ev)
		}
	}
}

// exited records the end of a container's launcher: the program's exit
// code (128+N for signal N), or the launcher's when the program never ran,
// and the reason its program gave not to be restarted, if any.
func (d *driver) exited(now time.Time, container string, code int, diagnostics, noRestart string) {
	task, ok := d.live[container]
	if !ok {
		return
	}
	delete(d.live, container)
	d.codes[task], d.ended[task] = code, now
	d.step(core.Tick{Now: now}, core.ContainerCompleted{ID: container, ExitStatus: int32(code), Diagnostics: diagnostics, NoRestart: noRestart})
}

// done reports whether the job is decided and every launcher has ended.
func (d *driver) done() bool { return d.fin != nil && len(d.live) == 0 }
