package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// jobFileVersion guards against a client and an AM of different builds
// disagreeing about the format; the binary is shipped with the job, so they
// normally agree.
const jobFileVersion = 2

// JobFile is everything the AM needs that YARN does not hand it: the job,
// who submitted it, where its staging directory is and the slice of the
// client's Hadoop configuration that locates the RM and HDFS. The AM runs in
// a container without HADOOP_CONF_DIR, so that slice travels with the job.
type JobFile struct {
	Version    int               `json:"version"`
	AppID      string            `json:"app_id"`
	User       string            `json:"user"`
	StagingDir string            `json:"staging_dir"`
	Job        taskspec.Job      `json:"job"`
	Conf       map[string]string `json:"conf"`

	// TaskResources are the files every task container gets, by their
	// name in its working directory: the tfyarn binary (BinaryName), which
	// runs as the task's launcher, and the job's script if any.
	TaskResources map[string]Resource `json:"task_resources,omitempty"`
	// PythonEnv is the link name of the job's Python environment among
	// TaskResources (an ARCHIVE YARN unpacks into ./<name>/), "" for none:
	// every task's launcher checks it and puts its bin/ first on PATH.
	PythonEnv string `json:"python_env,omitempty"`
	// PythonEnvLayers, when set, are the link names among TaskResources of
	// the layers of PythonEnv (ARCHIVEs, base first), which is then not a
	// resource itself: every task's launcher assembles it from them.
	PythonEnvLayers []string `json:"python_env_layers,omitempty"`
	// PythonBase is the base interpreter a venv PythonEnv links to, an
	// absolute path every node must have and let the job's user run ("" when
	// unknown or a conda env): the AM names it when a task cannot reach it.
	PythonBase string `json:"python_base,omitempty"`
	// PythonPath are link names among TaskResources (unpacked source
	// directories) put first on every task's PYTHONPATH, in order.
	PythonPath []string `json:"python_path,omitempty"`
	// Success is the rule deciding the job (taskspec.SuccessChief,
	// taskspec.SuccessAll); empty means the job's framework's
	// (frameworks.SuccessOf).
	Success taskspec.SuccessRule `json:"success,omitempty"`
	// RendezvousTimeout bounds how long the cluster tasks have to
	// register once the first one has; 0 means taskspec.DefaultRendezvousTimeout.
	RendezvousTimeout time.Duration `json:"rendezvous_timeout_ns,omitempty"`

	// AllocTimeout bounds how long, from the AM's registration, the chief,
	// worker and ps tasks may stay unallocated; 0 means taskspec.DefaultAllocTimeout.
	AllocTimeout time.Duration `json:"alloc_timeout_ns,omitempty"`
	// ClusterOffers describe, per node label ("" for nodes without one), what
	// the cluster offered the job's queue at submission, in words, for the
	// diagnostics of a job whose tasks cannot be allocated.
	ClusterOffers map[string]string `json:"cluster_offers,omitempty"`
	// QueueDefaultLabel is the queue's default node label expression: the
	// label the RM gives a task request that names none, which the AM's
	// messages about waiting tasks name.
	QueueDefaultLabel string `json:"queue_default_label,omitempty"`
	// LargestNodeMiB is, per node label ("" for none), the memory of the
	// largest running node at submission: what --oom-grow grows a task's
	// memory to at most.
	LargestNodeMiB map[string]int64 `json:"largest_node_mib,omitempty"`

	// Kerberos, on a Kerberized cluster, says how the AM keeps the job's
	// HDFS access alive; nil on an insecure cluster.
	Kerberos *JobKerberos `json:"kerberos,omitempty"`

	// Commands replace the job's command and arguments for the tasks of
	// one type: the TensorBoard task (run --tensorboard) runs tensorboard,
	// not the job's program.
	Commands map[taskspec.TaskType][]string `json:"commands,omitempty"`

	// MLflow, for a run --mlflow job whose run the client created or
	// joined, is where the AM logs the job's end; nil otherwise. The
	// server's credentials are among the --secret-env values.
	MLflow *JobMLflow `json:"mlflow,omitempty"`
}

// JobMLflow is the MLflow run a job logs into. It holds no secret.
type JobMLflow struct {
	TrackingURI  string `json:"tracking_uri"`
	ExperimentID string `json:"experiment_id"`
	RunID        string `json:"run_id"`
	// Joined: the caller's run (MLFLOW_RUN_ID), whose status is its owner's to set: the AM logs
	// the job's end into it but does not end it.
	Joined bool `json:"joined,omitempty"`
	// The TLS settings (MLFLOW_TRACKING_INSECURE_TLS, the certificate
	// paths, files on the AM's node).
	InsecureTLS    bool   `json:"insecure_tls,omitempty"`
	ServerCertPath string `json:"server_cert_path,omitempty"`
	ClientCertPath string `json:"client_cert_path,omitempty"`
}

// TaskCommand is what the tasks of type t run: their entry in Commands,
// else the job's command and arguments.
func (f JobFile) TaskCommand(t taskspec.TaskType) []string {
	if c, ok := f.Commands[t]; ok && len(c) > 0 {
		return c
	}
	return append([]string{f.Job.Command}, f.Job.Args...)
}

// JobKerberos is the Kerberos part of a job file. It never holds a secret:
// the keytab travels in the AM container's credentials, as a secret key.
type JobKerberos struct {
	// Principal submitted the job ("alice@EXAMPLE.COM").
	Principal string `json:"principal"`
	// KeytabSecret is the alias, among the AM's credentials' secret keys,
	// of the key that opens the sealed keytab (SealedKeytabName in the AM's
	// working directory) when the job was submitted with one: the AM then
	// logs in from it and renews the tasks' HDFS delegation tokens past
	// their maximum lifetime.
	KeytabSecret string `json:"keytab_secret,omitempty"`
	// FileSystems are the job's filesystems (the default one first) whose
	// delegation tokens the AM renews.
	FileSystems []string `json:"file_systems,omitempty"`
	// Krb5Conf is the client's krb5.conf, for an AM on a node that has
	// none (KRB5_CONFIG and /etc/krb5.conf win); keytab jobs only.
	Krb5Conf string `json:"krb5_conf,omitempty"`
}

// NewJobFile describes job for the AM, copying from conf only the keys the
// AM needs (see ShipConf).
func NewJobFile(appID, user, stagingDir string, job taskspec.Job, conf *hadoopconf.Config) JobFile {
	return JobFile{Version: jobFileVersion, AppID: appID, User: user, StagingDir: stagingDir, Job: job, Conf: ShipConf(conf)}
}

// jobFileFields is JobFile without methods; jobFileJSON shadows Commands
// with its exact form (see taskspec.ExactString): a program's arguments are
// bytes, and the job's own command and arguments are kept by taskspec.Job.
type jobFileFields JobFile

type jobFileJSON struct {
	jobFileFields
	Commands map[taskspec.TaskType][]taskspec.ExactString `json:"commands,omitempty"`
}

// Marshal encodes the job file. The programs' arguments and environment
// keep their bytes, UTF-8 or not.
func (f JobFile) Marshal() ([]byte, error) {
	w := jobFileJSON{jobFileFields: jobFileFields(f)}
	for t, argv := range f.Commands {
		if w.Commands == nil {
			w.Commands = map[taskspec.TaskType][]taskspec.ExactString{}
		}
		w.Commands[t] = taskspec.ExactStrings(argv)
	}
	b, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("contract: encoding the job file: %w", err)
	}
	return b, nil
}

// ParseJobFile decodes a job file written by Marshal and checks it. Its
// errors name no package: the AM, which reads job files, prefixes its own.
func ParseJobFile(data []byte) (JobFile, error) {
	var w jobFileJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return JobFile{}, fmt.Errorf("decoding the job file: %w", err)
	}
	f := JobFile(w.jobFileFields)
	f.Commands = nil
	for t, argv := range w.Commands {
		if f.Commands == nil {
			f.Commands = map[taskspec.TaskType][]string{}
		}
		f.Commands[t] = taskspec.PlainStrings(argv)
	}
	if f.Version != jobFileVersion {
		return JobFile{}, fmt.Errorf("job file version %d, this AM reads version %d (client and AM binaries differ)", f.Version, jobFileVersion)
	}
	if f.AppID == "" || f.User == "" {
		return JobFile{}, errors.New("job file lacks the application id or the user")
	}
	if _, ok := f.TaskResources[BinaryName]; !ok {
		return JobFile{}, fmt.Errorf("job file lacks the task launcher resource %q", BinaryName)
	}
	dirs := f.PythonPath
	if len(f.PythonEnvLayers) == 0 {
		dirs = append([]string{f.PythonEnv}, dirs...)
	} else {
		if f.PythonEnv == "" {
			return JobFile{}, errors.New("job file has Python env layers but no Python env to assemble them into")
		}
		if _, ok := f.TaskResources[f.PythonEnv]; ok {
			return JobFile{}, fmt.Errorf("job file ships %q and assembles it from layers", f.PythonEnv)
		}
		dirs = append(append([]string(nil), f.PythonEnvLayers...), dirs...)
	}
	for _, name := range dirs {
		if r, ok := f.TaskResources[name]; name != "" && (!ok || r.Type != hadoopyarn.LocalResourceTypeProto_ARCHIVE) {
			return JobFile{}, fmt.Errorf("job file names %q as a Python directory but ships no archive of that name", name)
		}
	}
	if _, err := taskspec.SuccessRuleOf(f.Success, f.Job); err != nil {
		return JobFile{}, err
	}
	return f, nil
}

// Config rebuilds a Hadoop configuration from the shipped keys.
func (f JobFile) Config() *hadoopconf.Config {
	c := hadoopconf.New(nil)
	for k, v := range f.Conf {
		c.Set(k, v)
	}
	return c
}

// shippedKeys are the configuration keys the AM needs: the RM's addresses
// (with HA; its web addresses and the web proxy's tell the AM which peer
// may fetch its web UI), the RPC protection, HDFS's location, and the
// scheduler's wait before killing a container it preempts. A whitelist,
// because
// site files can hold secrets (ZooKeeper auth, S3 keys) that have no
// business in a file on HDFS.
var shippedKeys = regexp.MustCompile(`^(` +
	`yarn\.resourcemanager\.(ha\.enabled|ha\.rm-ids|hostname(\..+)?|address(\..+)?|scheduler\.address(\..+)?|webapp\.(https\.)?address(\..+)?)` +
	`|yarn\.web-proxy\.address|yarn\.http\.policy|hadoop\.http\.staticuser\.user` +
	`|hadoop\.rpc\.protection|hadoop\.security\.authentication` +
	`|fs\.defaultFS|dfs\.nameservices|dfs\.ha\.namenodes\..+|dfs\.namenode\.rpc-address(\..+)?|dfs\.client\.use\.datanode\.hostname` +
	`|yarn\.resourcemanager\.principal|dfs\.namenode\.kerberos\.principal|dfs\.data\.transfer\.protection|dfs\.block\.access\.token\.enable` +
	// How long the scheduler waits between announcing a preemption and the
	// kill: the deadline the AM gives a warned task.
	`|yarn\.resourcemanager\.scheduler\.class|yarn\.resourcemanager\.monitor\.capacity\.preemption\.max_wait_before_kill|yarn\.scheduler\.fair\.waitTimeBeforeKill` +
	`)$`)

// ShipConf returns the expanded values of the keys the AM needs that conf
// sets explicitly; defaults are the AM's own.
func ShipConf(conf *hadoopconf.Config) map[string]string {
	out := map[string]string{}
	if conf == nil {
		return out
	}
	for _, k := range conf.Keys() {
		if shippedKeys.MatchString(k) {
			if v, ok := conf.Get(k); ok {
				out[k] = v
			}
		}
	}
	return out
}
