package contract

// Files in a container's working directory.
const (
	// BinaryName is the tfyarn binary's name in every container's working
	// directory: the AM's and each task's launcher.
	BinaryName = "tfyarn"
	// JobFileName is the job description's name in the AM's working
	// directory (a LocalResource the client ships from the staging
	// directory).
	JobFileName = "job.json"
)

// KeytabSecret is the alias, among the secret keys of the AM container's
// credentials (--keytab), of the key the job's keytab is sealed with
// (security.SealKeytab): the AM reads it into memory, removes it from its
// token file and never passes it to a task. The keytab itself never
// travels in the submission.
const KeytabSecret = "tfyarn.keytab-key"

// SealedKeytabName is the sealed keytab's name in the job's staging
// directory (0600) and in the AM's working directory (a LocalResource): the
// AM reads it once at start and deletes its local copy; the staging copy,
// which a later AM attempt reads, goes with the staging directory when the
// job ends.
const SealedKeytabName = "keytab.sealed"

// Environment a YARN NodeManager sets in every container (Hadoop's
// ApplicationConstants.Environment), read by the AM and the task launchers.
const (
	EnvContainerID = "CONTAINER_ID"
	EnvNMHost      = "NM_HOST"
	// EnvTokenFile names the container's credentials file, the AM's
	// included (Hadoop's UserGroupInformation reads the same).
	EnvTokenFile = "HADOOP_TOKEN_FILE_LOCATION"
	// EnvAppSubmitTime is when the application was submitted, in epoch
	// milliseconds: set in the AM's container only.
	EnvAppSubmitTime = "APP_SUBMIT_TIME_ENV"
)

// Environment the client sets in the AM's container.
const (
	EnvStagingDir = "TFYARN_STAGING_DIR"
	// EnvAMAttempts is how many AM attempts the job allows (--am-attempts):
	// above 1 the AM saves its task table for the next attempt to adopt.
	EnvAMAttempts = "TFYARN_AM_ATTEMPTS"
	EnvUser       = "TFYARN_USER"
)

// Environment the AM sets in every task's container (and `run --local` in
// every local task's), read by the task's launcher and by the user's
// program. They name the task and the AM, never a secret.
const (
	EnvTask        = "TFYARN_TASK"         // worker:1 (taskspec.TaskID)
	EnvTaskType    = "TFYARN_TASK_TYPE"    // worker
	EnvTaskIndex   = "TFYARN_TASK_INDEX"   // 1
	EnvTaskAttempt = "TFYARN_TASK_ATTEMPT" // 0, then one more per restart of this task
	// EnvRestart is how many times the job's cluster restarted before this
	// task started (--max-restarts): 0 on the first run, 1 after the first
	// restart, ... A script can tell a fresh start from a resumed one.
	EnvRestart = "TFYARN_RESTART"
	// EnvRetakePort, when set, is the port the launcher must reserve
	// instead of a free one: a ParameterServerStrategy worker replaced in
	// place comes back at its old address.
	EnvRetakePort = "TFYARN_RETAKE_PORT"
	EnvAppID      = "TFYARN_APP_ID"
	// EnvAMAddress is the host:port of the AM's rendezvous server.
	EnvAMAddress = "TFYARN_AM_ADDRESS"
	// EnvPythonEnv names the job's unpacked Python environment, relative
	// to the container's working directory (YARN unpacks the archive there
	// under its link name, e.g. "env"); the launcher puts its bin/ first
	// on PATH.
	EnvPythonEnv = "TFYARN_PYTHON_ENV"
	// EnvDockerImage is YARN's own variable (ContainerRuntimeConstants) through which the AM
	// asks a NodeManager's Docker runtime for a task's image (--image); the launcher reads it to
	// check that it really runs in a container.
	EnvDockerImage = "YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"
	// EnvPythonEnvLayers lists, separated by ':', the directories (relative
	// to the working directory) YARN unpacked the layers of a layered
	// environment into: the launcher assembles EnvPythonEnv from them
	// (envpack.Assemble) before anything else.
	EnvPythonEnvLayers = "TFYARN_PYTHON_ENV_LAYERS"
	// EnvPythonPath lists, separated by ':', directories relative to the
	// working directory that go first on the program's PYTHONPATH (the
	// job's --src-dir, e.g. "src").
	EnvPythonPath = "TFYARN_PYTHONPATH"
	// EnvFramework names the framework that launches the program
	// (internal/frameworks; unset: TensorFlow), EnvProcsPerNode its
	// processes per container (--nproc-per-node).
	EnvFramework    = "TFYARN_FRAMEWORK"
	EnvProcsPerNode = "TFYARN_NPROC_PER_NODE"
	// EnvFailOnLog and EnvExcludeNodeOnLog are the job's --fail-on-log and
	// --exclude-node-on-log: RE2 expressions the launcher matches the
	// program's stderr lines against (executor's logrules.go).
	EnvFailOnLog        = "TFYARN_FAIL_ON_LOG"
	EnvExcludeNodeOnLog = "TFYARN_EXCLUDE_NODE_ON_LOG"
	// EnvMinWorkers is an elastic job's --min-workers, and EnvJobService
	// the host:port of the side service the AM serves for the job when its
	// framework asks for one (framework.Framework.JobService).
	EnvMinWorkers = "TFYARN_MIN_WORKERS"
	// EnvElasticLastCall is an elastic job's --elastic-last-call in whole
	// seconds, unset for the framework's default.
	EnvElasticLastCall = "TFYARN_ELASTIC_LAST_CALL"
	EnvJobService      = "TFYARN_JOB_SERVICE"
)

// EnvJobServiceToken carries a task's token for the job's side service
// (framework.Task.JobServiceToken) from the AM (or run --local) to the
// task's launcher, inside the sealed program as --secret-env values travel;
// the launcher takes it out of the program's environment, and the framework
// puts it where its program needs it.
const EnvJobServiceToken = "TFYARN_JOB_SERVICE_TOKEN"

// EnvTaskPort is what the launcher sets in its program's environment: the
// port it reserved for the task, for programs that pick their own
// (tensorboard --port).
const EnvTaskPort = "TFYARN_TASK_PORT"

// SecretEnvAliasPrefix starts the alias, in the ApplicationMaster's
// credentials, of each --secret-env variable (the rest is its name): its
// value travels from the client in the application's credentials, which
// YARN hands the AM container, and from the AM to each launcher inside the
// sealed rendezvous program, never in the job file, a launch context, a
// log or the job's history. The AM takes them out of its credentials (and
// its token file) at once, so tasks' token files never hold them.
const SecretEnvAliasPrefix = "tfyarn.secret-env."

// SetForTasks reports whether tfyarn sets the variable name in every
// task's environment itself (the names above, the token file, the user):
// a job's own environment cannot replace it. What the job's framework sets
// is the framework's to say (frameworks.SetsForTasks).
func SetForTasks(name string) bool {
	switch name {
	case EnvTask, EnvTaskType, EnvTaskIndex, EnvTaskAttempt, EnvRestart, EnvRetakePort, EnvAppID,
		EnvAMAddress, EnvAMControl, EnvPythonEnv, EnvPythonEnvLayers, EnvPythonPath, EnvFramework, EnvProcsPerNode, EnvFailOnLog, EnvExcludeNodeOnLog, EnvMinWorkers, EnvElasticLastCall, EnvJobService, EnvJobServiceToken, EnvTaskPort, EnvPreemptionFile, EnvWarningsFile, EnvProgressFile, EnvResultFile,
		EnvTokenFile, "HADOOP_USER_NAME":
		return true
	}
	return false
}

// EnvAMControl is set by an AM that allows later attempts (--am-attempts
// above 1) in every task's container, to the attempt that started it: the
// task's launcher then listens on a control port for a later attempt's
// call naming its new address (package amattempt), and announces the port
// when it registers.
const EnvAMControl = "TFYARN_AM_CONTROL"
