package client

import (
	"os"
	"time"

	"github.com/tfyarn/tfyarn/appmaster"
	"github.com/tfyarn/tfyarn/hadoopconf"
	"github.com/tfyarn/tfyarn/ipc"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Defaults of the submission options.
const (
	DefaultAMMemoryMiB  = 256
	DefaultAMVCores     = 1
	DefaultQueue        = "default"
	DefaultCallTimeout  = 30 * time.Second
	DefaultPollInterval = 500 * time.Millisecond
	// BinaryName is the tfyarn binary's name in the AM's and every task's
	// working directory.
	BinaryName = appmaster.BinaryName
	// DefaultPython runs a job's Script.
	DefaultPython = "python3"
)

// Job is a taskspec.Job (tasks, command, environment, name, queue,
// application type) plus how to submit it. Zero values take the defaults.
type Job struct {
	taskspec.Job

	Tags        []string // YARN application tags (YARN lower-cases them)
	AMMemoryMiB int64    // the ApplicationMaster's container (DefaultAMMemoryMiB)
	AMVCores    int32    // (DefaultAMVCores)

	// Conf is the Hadoop client configuration; nil loads it from
	// HADOOP_CONF_DIR.
	Conf *hadoopconf.Config
	// User submits the job and owns its HDFS files; empty means
	// HADOOP_USER_NAME, else the OS user.
	User string
	// Binary is the tfyarn executable shipped as the ApplicationMaster: a
	// static Linux build (CGO_ENABLED=0). Empty means this process's own
	// executable.
	Binary string

	// Success is the rule deciding the job: taskspec.SuccessChief
	// (TensorFlow's: chief:0, else worker:0, decides) or
	// taskspec.SuccessAll (every task must exit 0); empty means
	// taskspec.DefaultSuccessRule.
	Success taskspec.SuccessRule
	// Python runs Script in the task containers (DefaultPython): a name on
	// the containers' PATH or an absolute path on the nodes.
	Python string
	// RendezvousTimeout bounds how long the cluster tasks have to register
	// once the first has (appmaster.DefaultRendezvousTimeout).
	RendezvousTimeout time.Duration

	// CallTimeout bounds each RM and HDFS call (DefaultCallTimeout).
	CallTimeout time.Duration
	// PollInterval is how often Wait asks for the application's report
	// (DefaultPollInterval).
	PollInterval time.Duration
}

// withDefaults fills the zero values that need no I/O.
func (j Job) withDefaults() Job {
	if j.Queue == "" {
		j.Queue = DefaultQueue
	}
	if j.AppType == "" {
		j.AppType = taskspec.DefaultAppType
	}
	if j.Name == "" {
		j.Name = "tfyarn"
	}
	if j.AMMemoryMiB <= 0 {
		j.AMMemoryMiB = DefaultAMMemoryMiB
	}
	if j.AMVCores <= 0 {
		j.AMVCores = DefaultAMVCores
	}
	if j.User == "" {
		j.User = ipc.DefaultUser()
	}
	if j.CallTimeout <= 0 {
		j.CallTimeout = DefaultCallTimeout
	}
	if j.PollInterval <= 0 {
		j.PollInterval = DefaultPollInterval
	}
	if j.Python == "" {
		j.Python = DefaultPython
	}
	if j.Success == "" {
		j.Success = taskspec.DefaultSuccessRule(j.Job)
	}
	return j
}

func (j Job) binary() (string, error) {
	if j.Binary != "" {
		return j.Binary, nil
	}
	return os.Executable()
}
