package executor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/checkpoint"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Config is everything a launcher needs. ConfigFromEnv fills it inside a
// YARN container; --local mode builds it directly.
type Config struct {
	Task      taskspec.TaskID
	AMAddress string // host:port of the AM's rendezvous server
	// Secret is the launcher's key towards the AM: its container's
	// (rendezvous.ContainerKey of the job's secret), which signs and seals
	// every call as ContainerID. In a container it comes from the
	// credentials file; never from the command line or the environment.
	Secret []byte
	// Credentials are the container's Hadoop credentials without the
	// rendezvous secret (ConfigFromEnv reads them from the NodeManager's
	// token file). When set, the launcher writes them to TokenFile before
	// the program starts, points the program's HADOOP_TOKEN_FILE_LOCATION
	// there, and while the program runs merges into it the fresh tokens
	// the AM publishes. Nil: the program inherits the environment's
	// HADOOP_TOKEN_FILE_LOCATION and nothing is refreshed (--local mode).
	Credentials *security.Credentials
	// OnFreshCredentials, when set, is told the launcher's credentials
	// each time the AM's fresh ones changed them (a keytab job's new HDFS
	// delegation tokens): what the launcher itself connects with (the
	// checkpoints' HDFS) must follow, as the program's token file does.
	OnFreshCredentials func(*security.Credentials)
	// TokenFile is the program's token file (relative to Dir, or absolute;
	// "": TokenFileName).
	TokenFile string
	// ScrubTokenFile, when set, is the NodeManager's token file, rewritten
	// without the rendezvous secret once the program's own is written, so
	// the program cannot read the secret there either (best effort).
	ScrubTokenFile string
	// Host is the name the other tasks reach this one by.
	Host        string
	ContainerID string
	// Command is the user's program and its arguments; the TF1 placeholders
	// ({ps_hosts} {worker_hosts} {job_name} {task_index}) are substituted.
	// Empty in a YARN container: the AM sends the program with the cluster
	// spec (rendezvous.Program), since the NodeManager would rewrite and
	// shell-expand a program in the launch context.
	Command []string
	// Env is the program's base environment (nil: the launcher's own);
	// TF_CONFIG and friends are added to it.
	Env []string
	Dir string // the program's working directory ("": the launcher's)
	// PythonEnv is the job's unpacked Python environment (relative to Dir,
	// or absolute; "" for none): checked before the program starts
	// (envpack.CheckRuntime; a conda env is relocated first) and put first
	// on the program's PATH.
	PythonEnv string
	// DockerImage is the image YARN's Docker runtime was asked to run this
	// task in (--image), empty for none; InitCmdline reads PID 1's command
	// line for checkInImage (default: /proc/1/cmdline).
	DockerImage string
	InitCmdline func() ([]byte, error)
	PIDs        func() [2]int // this process's pid and parent pid (default: the real ones)
	// PythonEnvLayers, when set, are the directories (relative to Dir, or
	// absolute) holding the unpacked layers of PythonEnv, which the
	// launcher assembles first (envpack.Assemble).
	PythonEnvLayers []string
	// PythonPath lists directories (relative to Dir, or absolute) put first
	// on the program's PYTHONPATH.
	PythonPath []string
	// PythonSDK is a directory holding tfyarn's Python package (pythonsdk.Extract), put on the
	// program's PYTHONPATH after PythonPath; "": the launcher writes it into Dir's sdkDirName.
	PythonSDK string
	// KeepResult leaves the program's result file where it wrote it rather than sending it to the
	// AM (run --local, whose output names the file).
	KeepResult bool
	// ResultDir is the directory of the program's result file ("": Dir).
	ResultDir string

	Stdout io.Writer // default os.Stdout
	Stderr io.Writer // default os.Stderr

	// RendezvousTimeout bounds registering and waiting for the cluster
	// spec. The AM has its own, shorter, registration timeout and says so;
	// this one only guards against a silent AM.
	RendezvousTimeout time.Duration
	// ProgramStopGrace is how long the program has between SIGTERM and SIGKILL
	// when the AM stops it.
	ProgramStopGrace time.Duration
	// OrphanGrace is how long what the program left running once it ended
	// (processes that left its group) has between SIGTERM and SIGKILL.
	OrphanGrace time.Duration
	// PortHandoffTimeout bounds how long the port stays reserved when the
	// launcher cannot see whether the program listens (no /proc).
	PortHandoffTimeout time.Duration
	// ReleasePortBeforeExec frees the port just before starting the program
	// (the classic, racy way), for programs whose server does not set
	// SO_REUSEPORT. Non-cluster tasks (evaluator, tensorboard) always do.
	ReleasePortBeforeExec bool
	// ReportTimeout bounds the exit report; YARN tells the AM the exit
	// status anyway, the report only adds the stderr tail.
	ReportTimeout time.Duration
	// Port is the port to reserve, 0 for a free one: a worker replaced in
	// place re-takes its predecessor's (contract.EnvRetakePort).
	Port int

	// AMAttempt, when set (contract.EnvAMControl), is the AM attempt that
	// started this container in a job that allows later ones: the launcher
	// then listens on a control port for a later attempt's address and
	// makes that its Locate (locate.go).
	AMAttempt int
	// controlPort is the control port opened, announced at registration.
	controlPort int

	// FailOnLog and ExcludeNodeOnLog are the job's --fail-on-log and
	// --exclude-node-on-log (RE2; empty for none): a stderr line of the
	// program matching one ends it, and the exit report says so
	// (logrules.go).
	FailOnLog, ExcludeNodeOnLog string
	// logRules are they compiled, once the program starts; nil for none.
	logRules *logRules
	// Locate, when set, finds the current AM's address once the one at
	// AMAddress stops answering (a later AM attempt runs elsewhere); the
	// launcher then registers there again. LocateWhere names where it
	// looks, for messages.
	Locate      rendezvous.Locator
	LocateWhere string
	// AMLostAfter is how long the AM goes unanswered before Locate is
	// asked; AMLostTimeout how long the launcher goes without any AM
	// before it gives up looking (the program runs on).
	AMLostAfter   time.Duration
	AMLostTimeout time.Duration

	// Signals, if set, replaces the launcher's own SIGTERM/SIGINT
	// subscription; tests inject signals through it.
	Signals <-chan os.Signal
	// Checkpoints, when set (run --checkpoint), keeps the task's
	// checkpoints: restored into its checkpoint directory before the
	// program starts, saved while it runs and at its exit. Local and
	// Scratch default to directories in Dir; Logf is the launcher's.
	Checkpoints *checkpoint.Keeper
	// ClientOptions tune the rendezvous client (tests shorten its waits).
	ClientOptions []rendezvous.ClientOption
}

// Defaults of Config's durations.
const (
	DefaultPortHandoffTimeout = 5 * time.Minute
	DefaultReportTimeout      = 10 * time.Second
	// stderrTailLines is how much of stderr goes into the exit report.
	stderrTailLines = 50
)

// EnvPythonUnbuffered makes the program's prints reach the YARN logs as
// they happen.
const EnvPythonUnbuffered = "PYTHONUNBUFFERED"

// ConfigFromEnv builds the Config of a launcher in a YARN container from
// the environment the AM and the NodeManager set, and the rendezvous secret
// from the container's credentials file.
func ConfigFromEnv(command []string) (Config, error) {
	cfg := Config{Command: command}
	var missing []string
	get := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return v
	}
	taskStr := get(contract.EnvTask)
	cfg.AMAddress = get(contract.EnvAMAddress)
	tokenFile := get(contract.EnvTokenFile)
	if len(missing) > 0 {
		return Config{}, fmt.Errorf("task launcher: environment lacks %s (is this running in a tfyarn container?)", strings.Join(missing, ", "))
	}
	task, err := taskspec.ParseTaskID(taskStr)
	if err != nil {
		return Config{}, fmt.Errorf("task launcher: %s: %w", contract.EnvTask, err)
	}
	cfg.Task = task
	// Read once: the secret stays in the launcher's memory, the rest goes
	// to the program's own token file.
	creds, err := security.ReadCredentialsFile(tokenFile)
	if err != nil {
		return Config{}, fmt.Errorf("task launcher: reading the rendezvous secret: %w", err)
	}
	if cfg.Secret, err = rendezvous.SecretFrom(creds); err != nil {
		return Config{}, fmt.Errorf("task launcher: %w (file %s)", err, tokenFile)
	}
	cfg.Credentials = rendezvous.TaskCredentials(creds)
	cfg.ScrubTokenFile = tokenFile
	cfg.ContainerID = os.Getenv(contract.EnvContainerID)
	if p := os.Getenv(contract.EnvRetakePort); p != "" {
		if cfg.Port, err = strconv.Atoi(p); err != nil || cfg.Port < 1 || cfg.Port > 65535 {
			return Config{}, fmt.Errorf("task launcher: %s=%q is not a port", contract.EnvRetakePort, p)
		}
	}
	if v := os.Getenv(contract.EnvAMControl); v != "" {
		if cfg.AMAttempt, err = strconv.Atoi(v); err != nil || cfg.AMAttempt < 1 {
			return Config{}, fmt.Errorf("task launcher: %s=%q is not an AM attempt", contract.EnvAMControl, v)
		}
	}
	cfg.PythonEnv = os.Getenv(contract.EnvPythonEnv)
	cfg.FailOnLog, cfg.ExcludeNodeOnLog = os.Getenv(contract.EnvFailOnLog), os.Getenv(contract.EnvExcludeNodeOnLog)
	cfg.DockerImage = os.Getenv(contract.EnvDockerImage)
	cfg.PythonEnvLayers = PythonPathList(os.Getenv(contract.EnvPythonEnvLayers))
	cfg.PythonPath = PythonPathList(os.Getenv(contract.EnvPythonPath))
	cfg.Host = os.Getenv(contract.EnvNMHost)
	if cfg.Host == "" {
		if cfg.Host, err = os.Hostname(); err != nil {
			return Config{}, fmt.Errorf("task launcher: no %s and no hostname: %w", contract.EnvNMHost, err)
		}
	}
	return cfg, nil
}

func (c *Config) setDefaults() error {
	if len(c.Command) > 0 && c.Command[0] == "" {
		return errors.New("task launcher: no program to run")
	}
	if !c.Task.Type.Known() {
		return fmt.Errorf("task launcher: unknown task type %q", c.Task.Type)
	}
	if c.AMAddress == "" || c.Host == "" {
		return errors.New("task launcher: AM address and host are required")
	}
	if c.Stdout == nil {
		c.Stdout = os.Stdout
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.RendezvousTimeout, taskspec.LauncherRendezvousTimeout)
	def(&c.ProgramStopGrace, taskspec.ProgramStopGrace)
	def(&c.OrphanGrace, taskspec.OrphanStopGrace)
	def(&c.PortHandoffTimeout, DefaultPortHandoffTimeout)
	def(&c.ReportTimeout, DefaultReportTimeout)
	def(&c.AMLostAfter, DefaultAMLostAfter)
	def(&c.AMLostTimeout, DefaultAMLostTimeout)
	return nil
}
