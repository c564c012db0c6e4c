package client

import (
	"time"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/shipplan"
	"github.com/tfyarn/tfyarn/internal/submit"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Defaults of the submission options.
const (
	DefaultAMMemoryMiB  = submit.DefaultAMMemoryMiB
	DefaultAMVCores     = submit.DefaultAMVCores
	DefaultQueue        = submit.DefaultQueue
	DefaultCallTimeout  = 30 * time.Second
	DefaultPollInterval = 500 * time.Millisecond
	// DefaultPython runs a job's Script.
	DefaultPython = shipplan.DefaultPython
	// DefaultTensorBoardSpec is the TensorBoard task's container when
	// `run --tensorboard` names none.
	DefaultTensorBoardSpec = submit.DefaultTensorBoardSpec
)

// ConfCacheDir is the client configuration key (core-site.xml or
// yarn-site.xml under HADOOP_CONF_DIR) naming the cluster's shared cache
// directory, for an administrator to set once for every user; Job.CacheDir
// (--cache-dir) overrides it.
const ConfCacheDir = submit.ConfCacheDir

// Job is what to run: a taskspec.Job (tasks, command, environment, name,
// queue, application type) plus what YARN needs to run it. Where and as
// whom it runs is the Connection's; what the caller is told on the way, the
// Callbacks'. Zero values take the defaults.
type Job struct {
	taskspec.Job

	Tags        []string // YARN application tags (YARN lower-cases them)
	AMMemoryMiB int64    // the ApplicationMaster's container (0: DefaultAMMemoryMiB, 96 MiB more per 1,000 tasks above 1,000)
	AMVCores    int32    // (DefaultAMVCores)
	// AMNodeLabel is the node label expression of the ApplicationMaster's
	// container; empty means none (the queue's default). The job-wide
	// NodeLabel is for the tasks only.
	AMNodeLabel string

	// Binary is the tfyarn executable shipped as the ApplicationMaster: a
	// static Linux build (CGO_ENABLED=0). Empty means this process's own
	// executable.
	Binary string

	// Success is the rule deciding the job: taskspec.SuccessChief
	// (TensorFlow's: chief:0, else worker:0, decides) or
	// taskspec.SuccessAll (every task must exit 0); empty means
	// taskspec.DefaultSuccessRule.
	Success taskspec.SuccessRule
	// Python runs Script in the task containers. Without PythonEnv: a name
	// on the containers' PATH or an absolute path on the nodes
	// (DefaultPython). With PythonEnv: the interpreter inside it,
	// env/bin/python by default; a relative path with a '/' is taken
	// inside env/ (bin/python3.11), an absolute path as is, and a bare name
	// is looked up on the task's PATH, which env/bin leads.
	Python string

	// PythonEnv is the job's Python environment: a venv or conda env
	// directory, packed on the fly (envpack.Pack), or an archive of one
	// (.tar.gz/.tgz, e.g. from `tfyarn pack`) used as is. It goes to the
	// HDFS cache (uploaded only when the cache lacks it) and into every task
	// container, not the AM's, as an ARCHIVE YARN unpacks into ./env/. The
	// tasks run with env/bin first on PATH and VIRTUAL_ENV (or CONDA_PREFIX)
	// set; their launcher checks that the environment runs on the node
	// first (a venv needs its base interpreter at the same path).
	PythonEnv string
	// Files are shipped into every task's working directory as they are
	// (FILE resources), named LocalFile.Name or their base name.
	Files []LocalFile
	// Archives are unpacked by YARN into ./<name>/ of every task's working
	// directory (.tar.gz, .tgz, .tar, .zip, .jar).
	Archives []LocalFile
	// SrcDir is the script's source tree (its sibling modules): packed
	// deterministically, unpacked into ./src/ of every task, and first on
	// PYTHONPATH. A Script inside SrcDir runs from there (src/<path>).
	SrcDir string
	// TensorBoardLogDir is what the job's TensorBoard task (a
	// taskspec.TensorBoard group in Tasks) serves: tensorBoardCommand, run
	// by the job's Python, outside TF_CONFIG's cluster, stopped once the
	// decider succeeded. Required with that group, refused without.
	TensorBoardLogDir string

	// CacheDir is a cache directory shared by the cluster's users (made by
	// an administrator like /tmp: mode 1777) for the job's files instead of
	// the user's own /user/<user>/.tfyarn/cache, readable by all: a file
	// already there is used when nobody but the user, the HDFS superuser or
	// an administrator named in tfyarn.cache.trusted-owners can change it
	// (another user's upload only once an administrator adopted it, see
	// Client.AdoptCache), so the NodeManagers localize it once per node for
	// everyone. A directory that one of them does not own, or that someone
	// else could rename, is not used: the user's own cache is, said through
	// OnCacheNotice. Empty means the client configuration's
	// tfyarn.cache.dir (ConfCacheDir), else the user's own cache. A
	// directory that does not exist, is not sticky or not writable fails
	// the submission before anything is uploaded.
	CacheDir string
	// RendezvousTimeout bounds how long the cluster tasks have to register
	// once the first has (taskspec.DefaultRendezvousTimeout).
	RendezvousTimeout time.Duration
	// AllocTimeout bounds how long, from the AM's registration, the chief,
	// worker and ps tasks may stay unallocated before the job fails saying
	// which and what the cluster offers (taskspec.DefaultAllocTimeout).
	AllocTimeout time.Duration

	// FileSystems are further HDFS filesystems the tasks use
	// (hdfs://host:port, hdfs://nameservice): on a Kerberized cluster the
	// job gets a delegation token for each. An HA nameservice must be known
	// to the ResourceManager's configuration too, since it renews them.
	FileSystems []string

	// SecretEnv is added to every task's environment like Env, but its
	// values never land in the job file, a launch context (so neither in
	// YARN's launch script nor in `yarn logs`), a log or the job's
	// history: they travel in the application's credentials to the AM and
	// sealed in the rendezvous to each launcher (contract.SecretEnvAliasPrefix).
	// A name may not be in Env too. Under --local they are the tasks'
	// environment as is.
	SecretEnv map[string]string

	// AMAttempts is how many times YARN may start the ApplicationMaster
	// (0 means 1), at most the RM's yarn.resourcemanager.am.max-attempts as
	// the client configuration states it (Hadoop's default 2 when absent).
	// When an attempt dies (its process killed, its node lost), YARN starts
	// the next one, which runs the job's tasks again.
	AMAttempts int
	// Timeout is the application's lifetime, YARN's LIFETIME application
	// timeout (whole seconds, rounded up): the RM kills the application
	// when it has run longer, saying so in its diagnostics. 0 means none.
	Timeout time.Duration

	// Priority is the application's YARN priority (higher goes first among
	// the queue's pending applications); 0 leaves it to the queue's default.
	// The scheduler lowers a priority above the cluster's maximum
	// (yarn.cluster.max-application-priority) to that maximum; the
	// application's report says what it got. Negative is refused.
	Priority int32

	// MLflow, when set, tracks the job in an MLflow run (docs/mlflow.md):
	// the tracking server is MLflow's own MLFLOW_TRACKING_URI of this
	// process's environment (with MLFLOW_TRACKING_TOKEN or
	// MLFLOW_TRACKING_USERNAME/PASSWORD, and its TLS variables). Submit
	// creates the run, or joins MLFLOW_RUN_ID's, logs the job as params
	// and tags, gives every task MLFLOW_TRACKING_URI, MLFLOW_RUN_ID and
	// MLFLOW_EXPERIMENT_ID (the credentials sealed, like SecretEnv), and
	// the job's end is logged into it. No MLFLOW_TRACKING_URI is refused
	// before anything is created; a server that is down or refuses costs
	// the job its tracking only, told through Callbacks.OnNotice.
	MLflow *MLflow
}

// MLflow is Job.MLflow.
type MLflow struct {
	// Experiment names the run's experiment (created when missing);
	// empty means the job's Name.
	Experiment string
}

// engineJob is the job as the submission engine takes it (submit.Job
// carries every field; a test keeps the two in step), with the
// connection's configuration and user.
func (j Job) engineJob(conf *hadoopconf.Config, user string) submit.Job {
	ej := submit.Job{Job: j.Job, Tags: j.Tags, AMMemoryMiB: j.AMMemoryMiB, AMVCores: j.AMVCores, AMNodeLabel: j.AMNodeLabel,
		Binary: j.Binary, Success: j.Success, Python: j.Python, PythonEnv: j.PythonEnv, SrcDir: j.SrcDir,
		TensorBoardLogDir: j.TensorBoardLogDir, CacheDir: j.CacheDir, RendezvousTimeout: j.RendezvousTimeout,
		AllocTimeout: j.AllocTimeout, FileSystems: j.FileSystems, SecretEnv: j.SecretEnv, AMAttempts: j.AMAttempts,
		Timeout: j.Timeout, Priority: j.Priority, Conf: conf, User: user}
	if j.MLflow != nil {
		ej.MLflow = &submit.MLflow{Experiment: j.MLflow.Experiment}
	}
	for _, f := range j.Files {
		ej.Files = append(ej.Files, shipplan.LocalFile(f))
	}
	for _, a := range j.Archives {
		ej.Archives = append(ej.Archives, shipplan.LocalFile(a))
	}
	return ej
}

// Validate is taskspec's check of the job, plus its environment against
// the variables tfyarn and the job's framework set in every task
// (shipplan.CheckTaskEnv, frameworks.CheckEnv).
func (j Job) Validate(limits taskspec.ClusterLimits) error {
	return j.engineJob(nil, "").Validate(limits)
}

// CheckFramework reports why the job cannot run under its framework (a
// task type the framework does not have, processes per node where it takes
// none): the part of Validate that needs no cluster.
func (j Job) CheckFramework() error { return j.engineJob(nil, "").CheckFramework() }
