package taskspec

import "time"

// The timeouts of a job's life, each meaning one thing under one name. The
// client, the ApplicationMaster, the task launcher and `run --local` all
// take their defaults from here; they live in taskspec, the floor every
// one of them (and the AM's pure core) already imports.
//
//	name                          value  who waits, for what                                     set by
//	DefaultAllocTimeout           5m     AM: chief/worker/ps unallocated after it registered      --alloc-timeout, JobFile.AllocTimeout
//	DefaultRendezvousTimeout      10m    AM: cluster tasks registering once the first has (YARN)  --rendezvous-timeout, JobFile.RendezvousTimeout
//	DefaultLocalRendezvousTimeout 2m     the same under `run --local`                             --rendezvous-timeout, localrun.Options.RegistrationTimeout
//	LauncherRendezvousTimeout     30m    launcher: registering and receiving the cluster spec     executor.Config.RendezvousTimeout (--local: 2x its registration timeout)
//	ProgramStopGrace              10s    launcher: its program, between SIGTERM and SIGKILL       executor.Config.ProgramStopGrace, localrun.Options.ProgramStopGrace
//	OrphanStopGrace               1s     launcher: what the program left running, SIGTERM to KILL  executor.Config.OrphanGrace
//	ContainerStopGrace            12s    AM: a task it asked to end, before the NM stops it       appmaster.LoopConfig.ContainerStopGrace
//	DefaultWorkerGrace            10s    SuccessChief: lingering workers ending by themselves      tensorflow.ChiefPolicy.WorkerGrace, localrun.Options.WorkerGrace
//	TFStopTimeout                 15s    SuccessChief: stopped tasks ending, from their stop        tensorflow.ChiefPolicy.StopTimeout
//	YarnReasonWait                30s    AM: YARN's report of a container killed from outside       core.Machine (fixed)
//	InPlaceWait                   1m     AM: a PS-strategy worker's container on its old node       core.Machine (fixed)
//	RestartStopWait               30s    AM: a restart's stopped tasks ending, after ContainerStopGrace core.Machine (fixed)
//	DefaultPreemptionWait         15s    YARN: a preemption warning to the kill (a task's deadline) the RM's max_wait_before_kill in the client's yarn-site, core.Config.PreemptionWait
//
// How they relate: ContainerStopGrace exceeds ProgramStopGrace plus
// OrphanStopGrace so that the launcher's own SIGKILLs, and its exit report,
// come before the NodeManager's hard stop; LauncherRendezvousTimeout exceeds DefaultRendezvousTimeout
// because it only guards against a silent AM, which reports the
// registration timeout itself; a job under SuccessChief ends at most
// DefaultWorkerGrace + TFStopTimeout (25 s) after its decider.
//
// Network and I/O timeouts belong to their packages and are not part of a
// job's life: ipc.DefaultDialTimeout, ipc.DefaultCallTimeout,
// ipc.DefaultIdleTimeout, hdfs.DefaultConnectTimeout, hdfs.DefaultIOTimeout,
// security.DefaultKDCTimeout, client.DefaultCallTimeout.
const (
	// DefaultAllocTimeout is how long the chief, worker and ps tasks may
	// stay unallocated after the AM registered before the job fails saying
	// which.
	DefaultAllocTimeout = 5 * time.Minute

	// DefaultRendezvousTimeout is how long the cluster tasks of a YARN job
	// have to register with the AM once the first one has. Containers
	// start within seconds of each other on a healthy cluster; localizing a
	// large environment can take minutes.
	DefaultRendezvousTimeout = 10 * time.Minute

	// DefaultLocalRendezvousTimeout is DefaultRendezvousTimeout under
	// `run --local`: importing TensorFlow takes seconds per process and
	// local tasks share the CPUs, but nothing is localized.
	DefaultLocalRendezvousTimeout = 2 * time.Minute

	// LauncherRendezvousTimeout bounds a task launcher's registering and
	// waiting for the cluster spec. The AM has its own, shorter,
	// registration timeout and says so; this one only guards against a
	// silent AM.
	LauncherRendezvousTimeout = 30 * time.Minute

	// ProgramStopGrace is how long a task's program has between the
	// launcher's SIGTERM and its SIGKILL when the task is stopped.
	ProgramStopGrace = 10 * time.Second

	// OrphanStopGrace is how long the processes a task's program left
	// behind (detached daemons, setsid'd grandchildren) have between the
	// launcher's SIGTERM and its SIGKILL once the program has ended.
	OrphanStopGrace = 1 * time.Second

	// ContainerStopGrace is how long a task the job no longer needs has,
	// once the AM asked its launcher to end the program, before the AM
	// stops its container through the NodeManager; longer than
	// ProgramStopGrace.
	ContainerStopGrace = 12 * time.Second

	// DefaultWorkerGrace is how long, under SuccessChief, the tasks still
	// running when the decider succeeded may take to end by themselves when
	// they are not stopped at once (see SplitAfterDecider).
	DefaultWorkerGrace = 10 * time.Second

	// TFStopTimeout (its name from when SuccessChief was TensorFlow's
	// alone; kept, being public) is how long, under SuccessChief, the AM waits for the
	// tasks it stopped to end, counted from the stop, before finishing
	// anyway. The launchers get ProgramStopGrace and the NodeManagers a
	// hard stop after ContainerStopGrace, so this bound only matters when a
	// node stops answering.
	TFStopTimeout = 15 * time.Second

	// YarnReasonWait is how long the AM waits, after a launcher reported
	// that its program died of a signal from outside (the NodeManager
	// killing the container: memory limit, preemption), for YARN's report
	// of the container, which says why. Past it the launcher's exit code
	// stands. YARN's report normally comes a heartbeat later.
	YarnReasonWait = 30 * time.Second

	// InPlaceWait is how long a ParameterServerStrategy worker replaced in
	// place (same node, same port) may wait for its container on that
	// node; past it the whole cluster restarts instead.
	InPlaceWait = time.Minute

	// RestartStopWait is how long a cluster restart waits, past the stop
	// escalation, for the stopped tasks' containers to end before asking
	// for new ones anyway (a lost node never reports its containers).
	RestartStopWait = 30 * time.Second

	// DefaultPreemptionWait is how long YARN's scheduler waits between
	// announcing that it will preempt a container (the PreemptionMessage
	// in the AM's allocate response) and killing it, when the client's
	// configuration does not say: Hadoop's default for the
	// CapacityScheduler's
	// yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill
	// and the FairScheduler's yarn.scheduler.fair.waitTimeBeforeKill. The
	// AM gives a warned task this long (its deadline) to checkpoint.
	DefaultPreemptionWait = 15 * time.Second
)
