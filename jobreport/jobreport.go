// Package jobreport is the job as its ApplicationMaster reports it: on its
// status page while it runs (the JSON `tfyarn status --output json` shows
// under "live") and in its history record on HDFS once it ended (under
// "history"). These types are that document's one Go definition: the AM
// writes them (through internal/contract, whose StatusReport, TaskReport and
// the rest are aliases of these), the client reads them, and the public API
// (client.Status, client.Result, client.Event) hands them to callers as
// they are, with no copy or conversion in between.
//
// It is a public leaf: it imports only the standard library, so that the
// ApplicationMaster's internal packages and the public client can share it.
package jobreport

import "time"

// Report is the job as the ApplicationMaster sees it.
type Report struct {
	AppID string `json:"app_id"`
	// Final is set once the job is decided; FinalStatus and Diagnostics
	// then say how.
	Final       bool   `json:"final"`
	FinalStatus string `json:"final_status,omitempty"`
	Diagnostics string `json:"diagnostics,omitempty"`
	Counts      Counts `json:"counts"`
	Tasks       []Task `json:"tasks"`
	// Restarts is how many restarts the job has had (--max-restarts):
	// cluster restarts and tasks restarted alone, counted toward the limit
	// or not; the diagnostics name the failure behind each.
	Restarts int `json:"restarts"`
	// RestartCauses are the restarts so far, one line each as the final
	// diagnostics list them ("restart 1 after worker:1 (container ... on
	// ...) failed: exit code 7"), in order: a client tells each as it
	// happens.
	RestartCauses []string `json:"restart_causes,omitempty"`
	// Waiting says, one line per task group, what tasks wait for a
	// container longer than a few seconds, where, and what the cluster
	// offers the queue there ("waiting for 1 worker container (1 vcores,
	// 1024 MiB, 1 GPUs, label \"gpu\"): queue ml-gpu on nodes labelled
	// gpu: ...").
	Waiting []string `json:"waiting,omitempty"`
	// ExcludedNodes are the nodes the job's containers stay off
	// (--exclude-nodes, --max-node-failures), in the order they were
	// excluded, each with why.
	ExcludedNodes []ExcludedNode `json:"excluded_nodes,omitempty"`
	// Warnings are what the job should know now and may act on ("GPUs
	// idle for 15m0s (0 % utilisation): the job fails at
	// --gpu-idle-timeout 30m0s unless they work").
	Warnings []string `json:"warnings,omitempty"`
	// GPUSecondsUsed sums, over the GPU samples of every task, each
	// sample's utilisation times the time since the task's previous one
	// (at most a minute): a GPU busy at 100 % for an hour is 3600.
	GPUSecondsUsed float64 `json:"gpu_seconds_used,omitempty"`

	// User submitted the job; Job describes it (nil from an AM that does
	// not say). Both feed the web UI and the job's history record.
	User string   `json:"user,omitempty"`
	Job  *JobInfo `json:"job,omitempty"`
	// TensorBoardURL is the job's TensorBoard task once it registered.
	TensorBoardURL string `json:"tensorboard_url,omitempty"`
	// StartedAt is when the AM started; EndedAt when the job was decided.
	StartedAt *time.Time `json:"started_at,omitempty"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	// Progress is the job's training progress, once a program reported
	// some.
	Progress *JobProgress `json:"progress,omitempty"`
	// TfyarnVersion is the tfyarn the AM runs ("v1.2.0", or for a
	// build that is no release "devel-<commit>"; docs/versions.md): the
	// one the job was submitted with. Empty from an AM older than it.
	TfyarnVersion string `json:"tfyarn_version,omitempty"`
}

// ExcludedNode is a node the job's containers stay off, and why ("2 task
// attempts failed there (--max-node-failures 2), the last: ...").
type ExcludedNode struct {
	Host   string `json:"host"`
	Reason string `json:"reason"`
}

// JobInfo is what the job was asked to run, for people reading the web UI
// or the history: the command, the task groups in the spec grammar, the
// queue, node labels and placement constraints in words.
type JobInfo struct {
	Name      string      `json:"name,omitempty"`
	Queue     string      `json:"queue,omitempty"`
	NodeLabel string      `json:"node_label,omitempty"`
	Command   string      `json:"command"` // the program or script with its arguments
	Groups    []GroupInfo `json:"groups"`
	// Spread is --spread's placement constraint in words, "no two worker
	// tasks on one node (--spread worker)"; empty without one.
	Spread string `json:"spread,omitempty"`
	// Affinity is --colocate's and --apart's placement constraints in
	// words, "each ps task on a node running a worker task (--colocate
	// ps=worker)", "; "-separated; empty without one.
	Affinity string `json:"affinity,omitempty"`
}

// GroupInfo is one task group: "worker", "2x1c,1g", its node label.
type GroupInfo struct {
	Type      string `json:"type"`
	Spec      string `json:"spec"`
	NodeLabel string `json:"node_label,omitempty"`
}

// Counts sums the tasks up: how many there are, have a container,
// registered their address, run, ended.
type Counts struct {
	Total      int `json:"total"`
	Allocated  int `json:"allocated"`
	Registered int `json:"registered"`
	Running    int `json:"running"`
	Ended      int `json:"ended"`
}

// Task is one task: type, index, state, the address it registered (host,
// port), its container and node, and its exit code once it ended (nil
// until then: the program's, or YARN's negative container exit status).
type Task struct {
	Task        string `json:"task"` // worker:1
	Type        string `json:"type"`
	Index       int    `json:"index"`
	State       string `json:"state"` // pending, launching, running, succeeded, failed, stopped
	Attempt     int    `json:"attempt"`
	Host        string `json:"host,omitempty"`
	Port        int    `json:"port,omitempty"`
	ContainerID string `json:"container_id,omitempty"`
	Node        string `json:"node,omitempty"`
	ExitCode    *int32 `json:"exit_code"`
	Failure     string `json:"failure,omitempty"`
	// Restarts is how many times this task was started again (its
	// Attempt: a cluster restart restarts every task).
	Restarts int `json:"restarts"`

	// NodeHTTP is the NodeManager's web address; LogsURL the task's live
	// logs there (append "/stdout" or "/stderr"), while the container runs.
	NodeHTTP string `json:"node_http,omitempty"`
	LogsURL  string `json:"logs_url,omitempty"`
	// Times of the current attempt: asked for, container started, ended.
	RequestedAt *time.Time `json:"requested_at,omitempty"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	EndedAt     *time.Time `json:"ended_at,omitempty"`
	// GPUs as last sampled by the task's launcher; GPUSampled says when.
	GPUs       []GPUSample `json:"gpus,omitempty"`
	GPUSampled *time.Time  `json:"gpus_sampled_at,omitempty"`
	// Progress is what the task's program last wrote to its progress file;
	// ProgressAt when the AM got it.
	Progress   *Progress  `json:"progress,omitempty"`
	ProgressAt *time.Time `json:"progress_at,omitempty"`
	// The program's CPU and memory as last sampled by the task's launcher
	// (absent until then); ProcessSampled says when.
	*ProcessSample
	ProcessSampled *time.Time `json:"process_sampled_at,omitempty"`
	// MemoryLimitBytes is the container's memory; NearMemoryLimit says the
	// program's peak RSS came close to it: YARN kills a container whose
	// processes exceed it.
	MemoryLimitBytes int64 `json:"memory_limit_bytes,omitempty"`
	NearMemoryLimit  bool  `json:"near_memory_limit,omitempty"`
	// ResultBytes is the size of the result the task's program left in its result file
	// (TFYARN_RESULT_FILE), once saved for `tfyarn result`; ResultNotSaved says, in one line, why
	// a result it left was not saved (over 64 MiB, HDFS refused it).
	ResultBytes    *int64 `json:"result_bytes,omitempty"`
	ResultNotSaved string `json:"result_not_saved,omitempty"`
	// Attempts are the task's containers so far, oldest first, the current
	// one last: the memory each ran with and how each ended; a failure line
	// says when --oom-grow gave the next one more ("(worker:0 restarts with
	// 512 MiB: --oom-grow 2)").
	Attempts []TaskAttempt `json:"attempts,omitempty"`
}

// TaskAttempt is one of a task's containers.
type TaskAttempt struct {
	Attempt     int    `json:"attempt"`
	ContainerID string `json:"container_id"`
	Node        string `json:"node,omitempty"`
	MemoryMiB   int64  `json:"memory_mib"`
	Failure     string `json:"failure,omitempty"`
}

// GPUSample is one GPU as a task's launcher last sampled it with
// nvidia-smi: utilisation in percent, memory in MiB.
type GPUSample struct {
	Index          int    `json:"index"`
	Name           string `json:"name,omitempty"`
	UtilizationPct int    `json:"utilization_pct"`
	MemoryUsedMiB  int64  `json:"memory_used_mib"`
	MemoryTotalMiB int64  `json:"memory_total_mib"`
}

// ProcessSample is a task's program as its launcher last sampled it from
// /proc: its whole process tree (the program and every process descending
// from it). CPUPercent is over the last sampling interval, 100 for one
// core kept busy (so above 100 with several); CPUSeconds is the tree's CPU
// time (user and system) so far; RSSBytes the tree's resident memory;
// PeakRSSBytes the most seen (samples, and each process's VmHWM).
type ProcessSample struct {
	CPUPercent   float64 `json:"cpu_percent"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	RSSBytes     int64   `json:"rss_bytes"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	Processes    int     `json:"processes"`
}

// Progress is a task's training progress as its program wrote it:
// Fraction always (0..1); Step and Total when the program wrote step/total
// (Total 0 otherwise).
type Progress struct {
	Fraction float64 `json:"fraction"`
	Step     int64   `json:"step,omitempty"`
	Total    int64   `json:"total,omitempty"`
}

// JobProgress is the job's training progress: that of the task that
// speaks for the job (Task: the chief, else worker:0, else "workers" for
// the slowest worker), its rate and the time left at that rate.
type JobProgress struct {
	Progress
	Task string `json:"task"`
	// StepsPerSecond is the rate in steps (step/total progress);
	// FractionPerSecond in fraction of the whole (either kind). Both are
	// over the last minute of reports, absent until two reports differ.
	StepsPerSecond    *float64 `json:"steps_per_second,omitempty"`
	FractionPerSecond *float64 `json:"fraction_per_second,omitempty"`
	// ETASeconds is the time left at FractionPerSecond: absent without a
	// rate or when progress stalled for a minute.
	ETASeconds *float64   `json:"eta_seconds,omitempty"`
	UpdatedAt  *time.Time `json:"updated_at,omitempty"`
}
