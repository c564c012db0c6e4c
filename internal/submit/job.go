package submit

import (
	"os"
	"time"

	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/shipplan"
	"github.com/tfyarn/tfyarn/taskspec"
)

// AMMemoryFor is the ApplicationMaster's memory, in MiB, for a job of tasks tasks that names
// none: DefaultAMMemoryMiB, and 96 MiB more per 1,000 tasks above 1,000. The AM holds about
// three connections per running task (its launcher's long-polls): at 5,000 tasks it peaked at
// 288 MiB in 256 MiB (its GC thrashing) and at 395-466 MiB in 512 MiB (bench/results/scale-sim.md).
func AMMemoryFor(tasks int) int64 {
	above := int64(max(0, tasks-1000))
	return DefaultAMMemoryMiB + (above*96+999)/1000
}

// Defaults of the submission options (client.Job documents them).
const (
	DefaultAMMemoryMiB = 256
	DefaultAMVCores    = 1
	DefaultQueue       = "default"
)

// Job is what Submit submits: client.Job, whose fields it carries one for
// one (client.Job documents each), plus the connection's part: the loaded
// client configuration and who submits. It is the engine's own type because
// internal packages cannot import client; client fills it field by field
// (a test there keeps the two in step).
type Job struct {
	taskspec.Job

	Tags              []string
	AMMemoryMiB       int64
	AMVCores          int32
	AMNodeLabel       string
	Binary            string
	Success           taskspec.SuccessRule
	Python            string
	PythonEnv         string
	Files             []shipplan.LocalFile
	Archives          []shipplan.LocalFile
	SrcDir            string
	TensorBoardLogDir string
	CacheDir          string
	RendezvousTimeout time.Duration
	AllocTimeout      time.Duration
	FileSystems       []string
	SecretEnv         map[string]string
	AMAttempts        int
	Timeout           time.Duration
	Priority          int32
	MLflow            *MLflow

	// Conf is the client configuration; User who submits the job and owns
	// its HDFS files (empty: HADOOP_USER_NAME or the OS user; a Kerberos
	// login's short name replaces it).
	Conf *hadoopconf.Config
	User string
}

// WithDefaults fills the zero values that need no I/O.
func (j Job) WithDefaults() Job {
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
		j.AMMemoryMiB = AMMemoryFor(j.Job.TaskCount())
	}
	if j.AMVCores <= 0 {
		j.AMVCores = DefaultAMVCores
	}
	if j.User == "" {
		j.User = ipc.DefaultUser()
	}
	if j.Success == "" {
		j.Success = frameworks.SuccessOf(j.Job)
	}
	if j.AMAttempts == 0 {
		j.AMAttempts = 1
	}
	return j
}

func (j Job) binary() (string, error) {
	if j.Binary != "" {
		return j.Binary, nil
	}
	return os.Executable()
}
