package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/progressbar"
	"github.com/tfyarn/tfyarn/jobreport"
	"github.com/tfyarn/tfyarn/taskspec"
	"github.com/urfave/cli/v2"
)

// taskFlags are the task-type flags of run, in job order.
var taskFlags = []taskspec.TaskType{taskspec.Chief, taskspec.Worker, taskspec.PS, taskspec.Evaluator}

func runCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a command in YARN containers (or locally with --local) and wait for it",
		ArgsUsage: "SCRIPT.py [-- ARGS...] | -- COMMAND [ARGS...]",
		UsageText: "tfyarn run --worker SPEC [--chief SPEC] [--ps SPEC] [--evaluator SPEC] [options] SCRIPT.py [-- ARGS...]\n" +
			"   tfyarn run --worker SPEC [--chief SPEC] [--ps SPEC] [--evaluator SPEC] [options] -- COMMAND [ARGS...]\n\n" +
			"   tfyarn run --chief 1c,2g --worker 2x1c,2g train.py -- --epochs 3\n" +
			"   tfyarn run --worker 3x1c,256m -- sh -c 'echo hello from $TFYARN_TASK'\n" +
			"   tfyarn run --worker 2x2c,1g --queue ml-gpu --output json -- ./train.sh\n" +
			"   tfyarn run --local --chief 1c --worker 2x1c --python ./venv/bin/python train.py -- --epochs 1\n" +
			"   tfyarn run --chief 1c,2g --worker 2x1c,2g --env ./venv --src-dir . --files data.csv \\\n" +
			"              --archives vocab.zip#vocab train.py -- --data data.csv --vocab vocab/\n" +
			"   tfyarn run --worker 2x1c,256m --env env.tar.gz -- python -c 'import numpy; print(numpy.__version__)'",
		Description:  runDescription,
		Flags:        runFlags(),
		OnUsageError: onUsageError,
		Action:       func(c *cli.Context) error { return runAction(c, e) },
	}
}

// runFlags are run's flags: the task groups first, in job order.
func runFlags() []cli.Flag {
	flags := []cli.Flag{}
	for _, t := range taskFlags {
		// A multiValue, so that a second --worker is seen and refused
		// (runJob) rather than silently winning over the first.
		flags = append(flags, &cli.GenericFlag{Name: string(t), Value: &multiValue{}, Usage: "`SPEC` of the " + string(t) + " tasks (once per type)"})
	}
	flags = append(flags,
		&cli.StringFlag{Name: "queue", Aliases: []string{"q"}, Value: client.DefaultQueue, Usage: "YARN queue"},
		&cli.StringFlag{Name: "name", Value: "tfyarn", Usage: "application name"},
		&cli.GenericFlag{Name: "tag", Value: &multiValue{}, Usage: "application tag (repeatable)"},
		&cli.StringFlag{Name: "am-memory", Value: strconv.Itoa(client.DefaultAMMemoryMiB) + "m", Usage: "ApplicationMaster memory, e.g. 256m or 1g (default: 256m, and 96m more per 1,000 tasks above 1,000)"},
		&cli.IntFlag{Name: "am-vcores", Value: client.DefaultAMVCores, Usage: "ApplicationMaster vcores"},
		&cli.GenericFlag{Name: "secret-env", Value: &multiValue{}, Usage: "`NAME` of a variable of this environment to pass to every task as is, a secret: its value never lands on a command line, in the job file, a launch context, a log or the job's history (repeatable)"},
		&cli.GenericFlag{Name: "setenv", Value: &multiValue{}, Usage: "`KEY=VALUE` in every task's environment, VALUE byte for byte (repeatable; KEY: letters, digits and _)"},
		&cli.GenericFlag{Name: "image", Value: &multiValue{}, Usage: "run the tasks in Docker image `IMAGE` through YARN's Docker runtime (host networking; the NodeManagers must allow it), or TYPE=IMAGE for one task type (repeatable); the ApplicationMaster stays outside"},
		&cli.GenericFlag{Name: "mount", Value: &multiValue{}, Usage: "`SRC:DST[:ro|rw]`: bind-mount the node's SRC at DST in every task's image, read-only unless rw (repeatable; needs --image; the NodeManagers decide which sources they allow)"},
		&cli.GenericFlag{Name: "colocate", Value: &multiValue{}, Usage: "`A=B[,A=B]`: each task of type A on a node that runs a task of type B, e.g. ps=worker (YARN placement constraints, as --spread; repeatable)"},
		&cli.GenericFlag{Name: "apart", Value: &multiValue{}, Usage: "`A=B[,A=B]`: no task of type A on a node that runs a task of type B, e.g. ps=worker (YARN placement constraints, as --spread; repeatable)"},
		&cli.GenericFlag{Name: "node-label", Value: &multiValue{}, Usage: "YARN node label for every task, or `[TYPE=]LABEL` for one task type (repeatable)"},
		&cli.StringFlag{Name: "spread", Usage: "no two tasks of task `TYPE` on one node, or `all`: no two chief, worker or ps tasks on one node (YARN placement constraints: the ResourceManager needs yarn.resourcemanager.placement-constraints.handler=scheduler); a spread the cluster's nodes can never hold is refused; a spread task restarts with the cluster, not alone"},
		&cli.StringFlag{Name: "framework", Usage: "what launches the program in each task: `tensorflow` (the default: TF_CONFIG), pytorch (torchrun in every --worker container, c10d rendezvous, torchrun's variables; a script only) or jax (JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID: jax.distributed.initialize() needs no arguments); pytorch and jax jobs have only --worker tasks and succeed when every one exits 0"},
		&cli.IntFlag{Name: "nproc-per-node", Usage: "--framework pytorch: processes torchrun starts in each worker container (`N`, default 1), each with its RANK and LOCAL_RANK"},
		&cli.DurationFlag{Name: "elastic-last-call", Usage: "with --min-workers: how long the workers that have met wait for more before they start a round (torch's last call; default 30s; whole seconds up to 10m)"},
		&cli.IntFlag{Name: "min-workers", Usage: "--framework pytorch: an elastic job (torchrun --nnodes MIN:MAX on a rendezvous store the ApplicationMaster serves): losing a worker is no failure while at least `N` workers are left; the others go on without it"},
		&cli.StringFlag{Name: "success", Usage: "what decides the job: `chief` (TensorFlow: chief:0, or worker:0 without a chief; the default with --chief, --ps, --evaluator or a script) or all (every task must exit 0; the default otherwise)"},
		&cli.StringFlag{Name: "env", Usage: "the job's Python environment: a venv or conda env `DIR` (packed on the fly) or an ARCHIVE of one (.tar.gz/.tgz, from tfyarn pack); uploaded once (content-addressed), unpacked into ./env/ of every task, env/bin first on PATH"},
		&cli.StringFlag{Name: "python", Value: client.DefaultPython, Usage: "Python interpreter that runs SCRIPT.py: without --env, a name on the containers' PATH or an absolute path on the nodes; with --env, inside the env (default env/bin/python; bin/python3.11 means env/bin/python3.11, an absolute path is used as is); with --local, on this machine"},
		&cli.StringSliceFlag{Name: "files", Usage: "files copied into every task's working directory, each as NAME (default: its base name; letters, digits and . _ - + @ , =): `PATH[#NAME]`, comma list, repeatable"},
		&cli.StringSliceFlag{Name: "archives", Usage: ".zip/.tar.gz/.tgz/.tar/.jar archives unpacked into ./NAME/ of every task (default NAME: the base name without its suffix): `PATH[#NAME]`, comma list, repeatable"},
		&cli.StringFlag{Name: "cache-dir", Usage: "HDFS `DIR` shared by the cluster's users (mode 1777, made by the HDFS superuser or an administrator named in tfyarn.cache.trusted-owners; anyone else's is not used) for the job's files instead of /user/<you>/.tfyarn/cache: entries its owner adopted (tfyarn cache adopt) are used by everyone and localized once per node; another user's own entry is never used (default: tfyarn.cache.dir from the client configuration, else your own cache)"},
		&cli.StringFlag{Name: "src-dir", Usage: "`DIR` of the script's sibling modules: packed, unpacked into ./src/ of every task and first on PYTHONPATH (a script inside DIR runs from there)"},
		&cli.DurationFlag{Name: "alloc-timeout", Value: taskspec.DefaultAllocTimeout, Usage: "how long, once the ApplicationMaster runs, the chief, worker and ps tasks may wait for containers: the job then fails naming the tasks still unallocated, their shape and what the cluster offers"},
		&cli.StringFlag{Name: "am-node-label", Usage: "YARN node `LABEL` of the ApplicationMaster's own container (default: none, i.e. the queue's default; --node-label is for the tasks only)"},
		&cli.StringFlag{Name: "start-after", Usage: "`TYPE=TYPE[,TYPE=TYPE]`: the first type's programs start only once every task of the second type has started its own, e.g. worker=ps (TonY's depends-on); a task waited for that does not start within --rendezvous-timeout of the rendezvous fails the job, naming it"},
		&cli.StringFlag{Name: "priority", Usage: "the application's YARN `N`, a whole number >= 0 (higher runs first among the queue's waiting applications; the scheduler lowers one above the cluster's yarn.cluster.max-application-priority to it; tfyarn status shows what it got) (default: the queue's default)"},
		&cli.DurationFlag{Name: "rendezvous-timeout", Value: taskspec.DefaultRendezvousTimeout, Usage: "how long the chief, worker and ps tasks have to register once the first one has (with --local: 2m unless given)"},
		&cli.IntFlag{Name: "am-attempts", Value: 1, Usage: "how many times YARN may start the ApplicationMaster (at most the ResourceManager's yarn.resourcemanager.am.max-attempts): when it dies, the next attempt runs the tasks again"},
		&cli.IntFlag{Name: "max-restarts", Usage: "how many times a program's failure may restart the job instead of failing it: the remaining tasks are stopped, new containers get a new TF_CONFIG and TFYARN_RESTART=1, 2, ... (a ParameterServerStrategy worker is replaced alone; an evaluator or tensorboard task restarts alone); preemption and lost nodes restart without counting (see --no-infra-restarts)"},
		&cli.BoolFlag{Name: "no-infra-restarts", Usage: "a container preempted, lost with its node, on failed disks or killed by the ResourceManager counts as a program's failure (toward --max-restarts, failing the job when none are left) instead of restarting without counting (up to " + strconv.Itoa(taskspec.MaxUncountedRestarts) + " times)"},
		&cli.IntFlag{Name: "max-node-failures", Value: taskspec.DefaultMaxNodeFailures, Usage: "a node where this many of the job's task attempts failed gets no more of its containers, for the rest of the job (0: never exclude a node)"},
		&cli.Float64Flag{Name: "oom-grow", Usage: "a task YARN killed for its memory restarts with this many times its memory (e.g. 2), up to the largest node of its label; the restart counts toward --max-restarts"},
		&cli.StringFlag{Name: "fail-on-log", Usage: "an RE2 expression: a line a task's program writes to stderr that matches it ends the job FAILED with that line (e.g. 'loss is NaN')"},
		&cli.StringFlag{Name: "exclude-node-on-log", Usage: "an RE2 expression: a line a task's program writes to stderr that matches it fails that attempt and excludes its node (e.g. 'Xid 79|uncorrectable ECC')"},
		&cli.DurationFlag{Name: "gpu-idle-timeout", Usage: "when every GPU of the job stays under --gpu-idle-threshold this long, the job ends FAILED (warned at half of it); 0: never. The cluster's default: tfyarn.gpu-idle.timeout in the client configuration"},
		&cli.Float64Flag{Name: "gpu-idle-threshold", Value: taskspec.DefaultGPUIdleThreshold, Usage: "the utilisation, in percent, under which a GPU counts as idle (tfyarn.gpu-idle.threshold)"},
		&cli.StringFlag{Name: "gpu-idle-action", Value: "fail", Usage: "what --gpu-idle-timeout does: fail the job, or warn only (tfyarn.gpu-idle.action)"},
		&cli.StringFlag{Name: "exclude-nodes", Usage: "hosts that get none of the job's containers, comma-separated, e.g. gpu-07,gpu-12"},
		&cli.StringFlag{Name: "retry-exit-codes", Usage: "with --max-restarts, only these program exit codes restart, comma-separated (e.g. 137 for a program killed by the kernel's OOM killer); others fail the job at once"},
		&cli.DurationFlag{Name: "timeout", Usage: "the application's lifetime (YARN's LIFETIME timeout, e.g. 2h): the ResourceManager kills it when it runs longer (default: none)"},
		&cli.BoolFlag{Name: "local", Usage: "run every task as a process on this machine instead of in YARN containers (no cluster needed)"},
		&cli.StringFlag{Name: "principal", Usage: "Kerberos `PRINCIPAL` (user@REALM) to log in as from --keytab (same as the global flag)"},
		&cli.StringFlag{Name: "keytab", Usage: "log in from this `KEYTAB` instead of the ticket cache; the ApplicationMaster then also renews the job's HDFS delegation tokens past their maximum lifetime (the keytab travels only inside the ApplicationMaster's credentials, never as a file)"},
		&cli.StringSliceFlag{Name: "file-systems", Usage: "further HDFS filesystems the tasks use, `hdfs://HOST:PORT or hdfs://NAMESERVICE` (comma list, repeatable): on a Kerberized cluster the job gets delegation tokens for them too"},
		&cli.BoolFlag{Name: "mlflow", Usage: "track the job in an MLflow run on the tracking server MLFLOW_TRACKING_URI names (with MLFLOW_TRACKING_TOKEN or MLFLOW_TRACKING_USERNAME/PASSWORD): the job's params and tags, its end's status, metrics and artifacts; every task gets MLFLOW_TRACKING_URI, MLFLOW_RUN_ID and MLFLOW_EXPERIMENT_ID; MLFLOW_RUN_ID set here joins that run"},
		&cli.StringFlag{Name: "mlflow-experiment", Usage: "with --mlflow, the run's experiment `NAME` (created when missing; default: --name)"},
		streamOutputFlag(),
		logsFlag(),
	)
	flags = append(flags, tensorBoardFlags()...)
	flags = append(flags, checkpointFlags()...)
	return flags
}

// runDescription is run's help text below its usage.
var runDescription = taskspec.SpecHelp + "\n\n" +
	"A first argument ending in .py is a script: it is shipped with the job and run by --python in\n" +
	"every task. Anything else is a command run as is.\n" +
	"Every task runs under tfyarn's launcher, which gathers the tasks' addresses and starts the\n" +
	"program with TF_CONFIG ({\"cluster\": {...}, \"task\": {\"type\": \"worker\", \"index\": 1}}), the\n" +
	"placeholders {ps_hosts} {worker_hosts} {job_name} {task_index} in ARGS substituted\n" +
	"({{task_index}} gives the text {task_index}), ARGS otherwise byte for byte, and\n" +
	"TFYARN_TASK (e.g. worker:1), TFYARN_TASK_TYPE, TFYARN_TASK_INDEX, TFYARN_TASK_PORT and\n" +
	"TFYARN_APP_ID set. No program starts before every chief, worker and ps task has registered.\n" +
	"--start-after worker=ps: a worker's program starts only once every ps task's program has started\n" +
	"(the types must be in the job; a type waiting for itself or a cycle is refused, exit 2).\n" +
	"--success chief: the job's outcome is chief:0's (worker:0's without a chief); once it succeeded,\n" +
	"the ps, evaluator and remaining workers are stopped; a failed chief, worker or ps fails the job.\n" +
	"--success all: the job succeeds when every task exits 0 and fails as soon as one fails.\n" +
	"--env DIR|ARCHIVE ships a Python environment: a directory is packed first (as tfyarn pack does);\n" +
	"it goes to the HDFS cache by sha256 (uploaded only when missing) and YARN unpacks it into ./env/ of\n" +
	"every task, which runs with env/bin first on PATH and VIRTUAL_ENV (or CONDA_PREFIX) set. A venv\n" +
	"needs its base interpreter at the same path on every node: each task checks that before starting.\n" +
	"--files, --archives, --src-dir and the script go through the same cache; uploaded_bytes counts\n" +
	"what this submission uploaded (0 when the cache had everything). Missing files fail at once.\n" +
	"--cache-dir DIR (default: tfyarn.cache.dir from the client configuration) uses a directory shared\n" +
	"by all users instead (mode 1777, see tfyarn cache init), when it and the directories above it are\n" +
	"the HDFS superuser's or an administrator's named in tfyarn.cache.trusted-owners (else your own cache\n" +
	"is used, said in one line); only their entries and yours are used, others' go through your own cache.\n" +
	"--local runs every task as a process on this machine, with the same rendezvous, TF_CONFIG,\n" +
	"success rule, exit codes and JSON (app_id \"local\"), and contacts no cluster (no\n" +
	"HADOOP_CONF_DIR needed); each task's output lines are prefixed with its name, e.g. [worker:1].\n" +
	"It ignores, with a note, the YARN-only flags --queue, --name, --tag, --am-memory, --am-vcores,\n" +
	"--node-label, --spread, --colocate, --apart, --am-node-label, --alloc-timeout, --priority and the global --conf-dir and --timeout. With --local, --env DIR uses DIR's python\n" +
	"and bin/ directly (no packing; an archive is refused), --src-dir goes first on PYTHONPATH, and\n" +
	"--files and --archives are linked (archives unpacked) into a temporary directory the tasks run in.\n" +
	"Before anything is created the job is checked against what the cluster can place, per node label\n" +
	"and counting the ApplicationMaster's container (--am-memory, --am-vcores, --am-node-label): a task\n" +
	"larger than every node of its label, GPUs where its nodes have none, a label the cluster lacks or\n" +
	"the queue cannot use or has no capacity on, or tasks that together exceed the label's nodes are\n" +
	"refused (exit 2). A job that merely does not fit now is submitted; if its chief, worker and ps\n" +
	"tasks still lack containers --alloc-timeout after the ApplicationMaster started, it fails saying\n" +
	"which and what the cluster offers. --node-label applies to the tasks only. An --env archive is\n" +
	"read through first (gzip, tar, bin/python inside). Staging directories of ended applications\n" +
	"left behind by a crashed client and AM are removed on submission. When the ResourceManager or the\n" +
	"ApplicationMaster stops answering, run says so on stderr and keeps following.\n" +
	"While the job runs, the decider's output (chief:0's, or worker:0's) is shown, each line prefixed\n" +
	"with its task ([chief:0]); --logs all shows every task's, --logs none nothing. Progress and status\n" +
	"lines go to stderr; stdout holds the tasks' stdout lines, or with --output json only the JSON.\n" +
	"Exit codes: 0 succeeded, 1 failed or killed, 2 usage, validation or cluster error.\n" +
	"JSON (--output json): {app_id, final_status, state, diagnostics, tracking_url, uploaded_bytes,\n" +
	"tasks: [{task, type, index, state, host, port, container_id, node, exit_code}]}."

func runAction(c *cli.Context, e *env) error {
	req, err := prepareRun(c, true)
	if err != nil {
		return err
	}
	if c.Bool("local") {
		return runLocalAction(c, e, req.job, req.out)
	}
	// run is submit then wait: one path for both.
	cl, s, err := connectAndSubmit(c, e, req.job)
	if err != nil {
		return err
	}
	defer cl.Close()
	defer s.Close()
	if req.out == outputEvents {
		e.events.write(submittedOf(c.Context, cl, s, req.job))
	}
	return waitJob(c.Context, e, cl, s, decider(req.job.Job), req.logs, req.out)
}

// runRequest is what run and submit take from the flags they share.
type runRequest struct {
	out  string // --output
	logs string // --logs
	job  client.Job
}

// prepareRun checks run's flags, which submit shares, in one order for both: --output, --logs,
// --local (refused unless localOK: submit's job would end with its process), then the job. The
// same flags get the same error from both commands.
func prepareRun(c *cli.Context, localOK bool) (runRequest, error) {
	out, err := streamOutputFormat(c)
	if err != nil {
		return runRequest{}, err
	}
	mode, err := logsMode(c)
	if err != nil {
		return runRequest{}, err
	}
	if !localOK && c.Bool("local") {
		return runRequest{}, usagef("submit --local: a local run ends with its process; use tfyarn run --local")
	}
	job, err := runJob(c)
	if err != nil {
		return runRequest{}, err
	}
	return runRequest{out: out, logs: mode, job: job}, nil
}

// connectAndSubmit connects as the flags say and submits job, saying so on stderr: run's and
// submit's one path to a submitted job. The caller closes both.
func connectAndSubmit(c *cli.Context, e *env, job client.Job) (*client.Client, *client.Submission, error) {
	cl, err := connectForRun(c, e)
	if err != nil {
		return nil, nil, err
	}
	s, err := submitJob(c, e, cl, job)
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	return cl, s, nil
}

// connectForRun connects to the cluster as the global flags and run's own
// --principal and --keytab say.
func connectForRun(c *cli.Context, e *env) (*client.Client, error) {
	conn, err := e.connection()
	if err != nil {
		return nil, err
	}
	if c.IsSet("principal") {
		conn.Principal = c.String("principal")
	}
	if c.IsSet("keytab") {
		conn.Keytab = c.String("keytab")
	}
	cl, err := client.Connect(conn)
	if err != nil {
		return nil, &confError{err}
	}
	return cl, nil
}

// submitCallbacks say on progress what the submission packs, finds in the
// cache and uploads (with a bar on a terminal).
func submitCallbacks(e *env, progress io.Writer) client.Callbacks {
	var cb client.Callbacks
	cb.OnPacked = func(p client.PackInfo) {
		what := "source directory"
		if p.Kind != "" {
			what = p.Kind
			if p.PythonVersion != "" {
				what += ", Python " + p.PythonVersion
			}
		}
		layers := ""
		if p.Layers > 0 {
			layers = fmt.Sprintf(" in %d layers", p.Layers)
			if !p.Cached && p.LayersPacked < p.Layers {
				layers = fmt.Sprintf(" in %d layers (%d changed)", p.Layers, p.LayersPacked)
			}
		}
		if p.Cached {
			fmt.Fprintf(progress, "%s (%s) unchanged since packed: %s%s, sha256 %s (checked in %.2fs)\n", p.Dir, what, progressbar.Bytes(p.Bytes), layers, shortDigest(p.SHA256), p.Took.Seconds())
			return
		}
		fmt.Fprintf(progress, "packed %s (%s): %s%s in %.1fs, sha256 %s\n", p.Dir, what, progressbar.Bytes(p.Bytes), layers, p.Took.Seconds(), shortDigest(p.SHA256))
	}
	cb.OnCacheNotice = func(msg string) { fmt.Fprintln(progress, msg) }
	cb.OnNotice = func(msg string) { fmt.Fprintln(e.stderr, msg) }
	cb.OnUpload = func(name string, size int64) (func(sent, total int64), func()) {
		// On a terminal only: nothing at all on a pipe.
		bar := progressbar.New(e.stderr, "uploading "+name)
		return bar.Update, bar.Done
	}
	return cb
}

// printRunEvent says what happened to the job while run waits for it: notices
// on stderr, the rest on progress; a task's change also goes to its live logs.
func printRunEvent(ctx context.Context, e *env, progress io.Writer, live *runLogs, ev client.Event) {
	if ev.Notice != "" {
		fmt.Fprintf(e.stderr, "%s\n", ev.Notice)
		return
	}
	if ev.Waiting != "" {
		fmt.Fprintf(progress, "%s %s (for %s)\n", ev.AppID, ev.Waiting, ev.For.Round(time.Second))
		return
	}
	if ev.Restart != "" {
		fmt.Fprintf(progress, "%s restarting: %s\n", ev.AppID, ev.Restart)
		return
	}
	if ev.NearMemory != "" {
		fmt.Fprintf(progress, "%s %s\n", ev.AppID, ev.NearMemory)
		return
	}
	if ev.Warning != "" {
		fmt.Fprintf(progress, "%s warning: %s\n", ev.AppID, ev.Warning)
		return
	}
	if ev.Task != nil {
		// A task's last output lines come before its end.
		live.event(ctx, ev)
		printTaskChange(progress, ev)
		printTensorBoard(progress, ev)
		return
	}
	if ev.StateChanged {
		fmt.Fprintf(progress, "%s %s\n", ev.AppID, ev.State)
	}
	if ev.TrackingURLChanged || ev.StateChanged && ev.State == "RUNNING" && ev.TrackingURL != "" {
		fmt.Fprintf(progress, "%s tracking URL: %s\n", ev.AppID, ev.TrackingURL)
	}
}

// runJob turns the flags and arguments into a job, validating the specs
// before anything touches the cluster.
func runJob(c *cli.Context) (client.Job, error) {
	argv := c.Args().Slice()
	if err := checkTensorBoardArgv(c, argv); err != nil {
		return client.Job{}, err
	}
	job := client.Job{Job: taskspec.Job{
		Name:  c.String("name"),
		Queue: c.String("queue"),
	}}
	if err := applyProgram(argv, &job); err != nil {
		return client.Job{}, err
	}
	if c.IsSet("python") {
		job.Python = c.String("python")
	}
	if err := applyShipping(c, &job); err != nil {
		return client.Job{}, err
	}
	job.AllocTimeout = c.Duration("alloc-timeout")
	if job.AllocTimeout <= 0 {
		return client.Job{}, usagef("--alloc-timeout %s: give a positive duration, e.g. 5m", job.AllocTimeout)
	}
	if err := applyMLflow(c, &job); err != nil {
		return client.Job{}, err
	}
	job.AMNodeLabel = c.String("am-node-label")
	if strings.ContainsAny(job.AMNodeLabel, " ,=&|") {
		return client.Job{}, usagef("--am-node-label %q: give one node label", job.AMNodeLabel)
	}
	if err := applyPriority(c, &job); err != nil {
		return client.Job{}, err
	}
	job.AMAttempts = c.Int("am-attempts")
	if err := applyCheckpoint(c, &job); err != nil {
		return client.Job{}, err
	}
	if err := applyRestarts(c, &job); err != nil {
		return client.Job{}, err
	}
	job.Timeout = c.Duration("timeout")
	job.RendezvousTimeout = c.Duration("rendezvous-timeout")
	if job.RendezvousTimeout <= 0 {
		return client.Job{}, usagef("--rendezvous-timeout %s: give a positive duration, e.g. 10m", job.RendezvousTimeout)
	}
	if err := applyTaskGroups(c, &job); err != nil {
		return client.Job{}, err
	}
	if c.IsSet("start-after") {
		order, err := taskspec.ParseStartAfter(c.String("start-after"))
		if err != nil {
			return client.Job{}, usagef("%v", err)
		}
		job.StartAfter = order
	}
	if err := applyImagesAndMounts(c, &job); err != nil {
		return client.Job{}, err
	}
	if err := applyEnv(c, &job); err != nil {
		return client.Job{}, err
	}
	if err := applyTensorBoard(c, &job); err != nil {
		return client.Job{}, err
	}
	if err := applyNodeLabels(&job, c.Generic("node-label").(*multiValue).values); err != nil {
		return client.Job{}, err
	}
	job.Spread = strings.ToLower(strings.TrimSpace(c.String("spread")))
	if err := applyAffinities(c, &job); err != nil {
		return client.Job{}, err
	}
	job.Framework = strings.ToLower(strings.TrimSpace(c.String("framework")))
	job.ProcsPerNode = c.Int("nproc-per-node")
	job.MinWorkers = c.Int("min-workers")
	job.ElasticLastCall = c.Duration("elastic-last-call")
	if err := job.CheckFramework(); err != nil {
		return client.Job{}, usagef("%v", err)
	}
	if s := c.String("success"); s != "" {
		rule, err := taskspec.ParseSuccessRule(s)
		if err != nil {
			return client.Job{}, usagef("--success: %v", err)
		}
		job.Success = rule
	}
	job.Tags = c.Generic("tag").(*multiValue).values
	if err := applyAMResources(c, &job); err != nil {
		return client.Job{}, err
	}
	if err := job.Validate(taskspec.ClusterLimits{}); err != nil {
		return client.Job{}, err
	}
	return job, nil
}

// applyProgram sets the job's script or command and their arguments from
// run's positional arguments.
func applyProgram(argv []string, job *client.Job) error {
	if len(argv) == 0 {
		return usagef("run needs a script or a command after --, e.g. tfyarn run --worker 1c train.py or tfyarn run --worker 1c -- sh -c 'exit 0'; see 'tfyarn run --help'")
	}
	if strings.HasSuffix(argv[0], ".py") {
		// The script's own arguments follow a "--" (which urfave/cli leaves
		// in place after a positional argument).
		args := argv[1:]
		if len(args) > 0 && args[0] == "--" {
			args = args[1:]
		}
		job.Script, job.Args = argv[0], args
	} else {
		job.Command, job.Args = argv[0], argv[1:]
	}
	return nil
}

// applyTaskGroups sets the job's task groups from --chief, --worker, --ps and
// --evaluator, each given at most once.
func applyTaskGroups(c *cli.Context, job *client.Job) error {
	for _, t := range taskFlags {
		specs := c.Generic(string(t)).(*multiValue).values
		if len(specs) == 0 {
			continue
		}
		if len(specs) > 1 {
			return usagef("--%s is given %d times (%s); give it once with the whole group, e.g. --%s %s", t, len(specs), quoteList(specs), t, specs[len(specs)-1])
		}
		g, err := taskspec.ParseSpec(t, specs[0])
		if err != nil {
			return err
		}
		job.Tasks = append(job.Tasks, g)
	}
	return nil
}

// applyImagesAndMounts sets the job's Docker images (--image, once per task
// type or for all) and bind mounts (--mount).
func applyImagesAndMounts(c *cli.Context, job *client.Job) error {
	for _, v := range c.Generic("image").(*multiValue).values {
		t, img, err := taskspec.ParseImage(v)
		if err != nil {
			return err
		}
		if _, dup := job.Images[string(t)]; dup {
			return usagef("--image %q: an image for %s is given twice; give it once", v, map[bool]string{true: "every task type", false: string(t)}[t == taskspec.AllTypes])
		}
		if job.Images == nil {
			job.Images = map[string]string{}
		}
		job.Images[string(t)] = img
	}
	for _, v := range c.Generic("mount").(*multiValue).values {
		m, err := taskspec.ParseMount(v)
		if err != nil {
			return err
		}
		job.Mounts = append(job.Mounts, m)
	}
	return nil
}

// applyEnv sets the tasks' environment: --setenv's KEY=VALUE pairs, and
// --secret-env's variables of this environment, each given once.
func applyEnv(c *cli.Context, job *client.Job) error {
	for _, kv := range c.Generic("setenv").(*multiValue).values {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("--setenv %q: expected KEY=VALUE", kv)
		}
		if _, dup := job.Env[k]; dup {
			return usagef("--setenv %s is given twice; give each variable once", k)
		}
		if job.Env == nil {
			job.Env = map[string]string{}
		}
		job.Env[k] = v
	}
	for _, name := range c.Generic("secret-env").(*multiValue).values {
		v, ok := os.LookupEnv(name)
		switch {
		case !taskspec.ValidEnvName(name):
			return usagef("--secret-env %q: give the name of a variable of this environment (letters, digits and _)", name)
		case !ok:
			return usagef("--secret-env %s: %s is not set in this environment; export it first", name, name)
		}
		if _, dup := job.SecretEnv[name]; dup {
			return usagef("--secret-env %s is given twice; give each variable once", name)
		}
		if job.SecretEnv == nil {
			job.SecretEnv = map[string]string{}
		}
		job.SecretEnv[name] = v
	}
	return nil
}

// applyAffinities sets the job's placement between task types (--colocate,
// --apart), each pair once.
func applyAffinities(c *cli.Context, job *client.Job) error {
	for _, flag := range []string{"colocate", "apart"} {
		for _, v := range c.Generic(flag).(*multiValue).values {
			pairs, err := taskspec.ParseAffinities(v, flag == "apart")
			if err != nil {
				return usagef("%v", err)
			}
			for _, p := range pairs {
				if !slices.Contains(job.Affinities, p) {
					job.Affinities = append(job.Affinities, p)
				}
			}
		}
	}
	return nil
}

// applyAMResources sets the ApplicationMaster's container (--am-memory,
// --am-vcores).
func applyAMResources(c *cli.Context, job *client.Job) error {
	// Unset, the job's size decides (submit.AMMemoryFor): the flag's default is a small job's.
	if c.IsSet("am-memory") {
		mem, err := parseMiB(c.String("am-memory"))
		if err != nil {
			return usagef("--am-memory %q: %v", c.String("am-memory"), err)
		}
		job.AMMemoryMiB = mem
	}
	if v := c.Int("am-vcores"); v < 1 {
		return usagef("--am-vcores %d: give at least 1", v)
	} else {
		job.AMVCores = int32(v)
	}
	return nil
}

// parseMiB reads 256, 256m or 1g (MiB, MiB, GiB).
func parseMiB(s string) (int64, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "g"):
		mult, s = 1024, strings.TrimSuffix(s, "g")
	case strings.HasSuffix(s, "m"):
		s = strings.TrimSuffix(s, "m")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > 1<<40 {
		return 0, errors.New("expected a size like 256m or 1g")
	}
	return n * mult, nil
}

// multiValue is a repeatable string flag that, unlike StringSliceFlag, does
// not split on commas: KEY=a,b is one value.
type multiValue struct{ values []string }

func (m *multiValue) Set(v string) error { m.values = append(m.values, v); return nil }
func (m *multiValue) String() string     { return strings.Join(m.values, " ") }

// quoteList renders flag values for a message: "a", "b".
func quoteList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// applyNodeLabels reads --node-label values: LABEL is the job's default,
// TYPE=LABEL one task group's.
func applyNodeLabels(job *client.Job, values []string) error {
	for _, v := range values {
		typ, label, perType := strings.Cut(v, "=")
		if !perType {
			job.NodeLabel = v
			continue
		}
		t, err := taskspec.ParseTaskType(typ)
		if err != nil {
			return usagef("--node-label %q: %v", v, err)
		}
		found := false
		for i := range job.Tasks {
			if job.Tasks[i].Type == t {
				job.Tasks[i].NodeLabel, found = label, true
			}
		}
		if !found {
			return usagef("--node-label %q: the job has no %s tasks", v, t)
		}
	}
	return nil
}

// printTaskChange prints one task's start, registration or end, with the
// tasks' counts.
func printTaskChange(w io.Writer, ev client.Event) {
	t := ev.Task
	var what string
	switch ev.TaskChange {
	case jobreport.TaskLaunched:
		what = fmt.Sprintf("started in %s on %s", t.ContainerID, t.Node)
	case jobreport.TaskRegistered:
		what = fmt.Sprintf("registered at %s:%d", t.Host, t.Port)
	case jobreport.TaskEnded:
		what = t.State
		if ev.Exit != "" {
			what += fmt.Sprintf(" (%s)", ev.Exit)
		}
	default:
		return
	}
	counts := ""
	if n := ev.Counts; n != nil {
		counts = fmt.Sprintf(" [%d/%d allocated, %d registered, %d running, %d ended]", n.Allocated, n.Total, n.Registered, n.Running, n.Ended)
	}
	fmt.Fprintf(w, "%s %s %s%s\n", ev.AppID, t.Task, what, counts)
}

// applyShipping reads --env, --files, --archives and --src-dir. Their
// files are checked by client.Client.Submit (or the local run) before anything
// else happens.
func applyShipping(c *cli.Context, job *client.Job) error {
	job.PythonEnv = c.String("env")
	job.SrcDir = c.String("src-dir")
	job.CacheDir = c.String("cache-dir")
	var err error
	if job.Files, err = localFiles("files", c.StringSlice("files")); err != nil {
		return err
	}
	job.Archives, err = localFiles("archives", c.StringSlice("archives"))
	return err
}

// localFiles parses PATH[#NAME] values; StringSliceFlag has already split
// comma lists and gathered repeated flags.
func localFiles(flag string, values []string) ([]client.LocalFile, error) {
	var out []client.LocalFile
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		f, err := client.ParseLocalFile(v)
		if err != nil {
			return nil, usagef("--%s %v", flag, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func shortDigest(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// applyPriority reads --priority: YARN's priorities are int32, and a
// negative one means nothing to the CapacityScheduler.
func applyPriority(c *cli.Context, job *client.Job) error {
	if !c.IsSet("priority") {
		return nil
	}
	text := c.String("priority")
	n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 32)
	if err != nil || n < 0 {
		return usagef("--priority %q: give a whole number from 0 to %d, e.g. --priority 5", text, math.MaxInt32)
	}
	job.Priority = int32(n)
	return nil
}

// applyMLflow reads --mlflow and --mlflow-experiment. The tracking
// server's variables are checked here too, before anything is created.
func applyMLflow(c *cli.Context, job *client.Job) error {
	if !c.Bool("mlflow") {
		if c.IsSet("mlflow-experiment") {
			return usagef("--mlflow-experiment needs --mlflow")
		}
		return nil
	}
	if c.Bool("local") {
		return usagef("--mlflow is for jobs on YARN; leave it out with --local")
	}
	if os.Getenv("MLFLOW_TRACKING_URI") == "" {
		return usagef("--mlflow: MLFLOW_TRACKING_URI is not set: export the tracking server's URL (http://host:port) first")
	}
	job.MLflow = &client.MLflow{Experiment: c.String("mlflow-experiment")}
	return nil
}
