package contract

import (
	"net"
	"strconv"
	"time"
)

// StatusPath is the AM's status page in JSON (StatusReport). The client
// reaches it directly at the application report's host and rpc_port, with
// HeaderStatusAuth proving it holds the job's status key (statuskey.go):
// the report names the command line, diagnostics with stderr tails and
// every task's address, which only the job's owner may read.
const StatusPath = "/status"

// StatusReport is the job as the AM sees it.
type StatusReport struct {
	AppID string `json:"app_id"`
	// Final is set once the job is decided; FinalStatus and Diagnostics
	// then say how.
	Final       bool         `json:"final"`
	FinalStatus string       `json:"final_status,omitempty"`
	Diagnostics string       `json:"diagnostics,omitempty"`
	Counts      TaskCounts   `json:"counts"`
	Tasks       []TaskReport `json:"tasks"`
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
	// some (progress.go).
	Progress *JobProgress `json:"progress,omitempty"`
}

// JobInfo is what the job was asked to run, for people reading the web UI
// or the history: the command, the task groups in the spec grammar, the
// queue and node labels.
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

// TaskCounts sums the tasks up: how many have a container, registered
// their address, run, ended.
type TaskCounts struct {
	Total      int `json:"total"`
	Allocated  int `json:"allocated"`
	Registered int `json:"registered"`
	Running    int `json:"running"`
	Ended      int `json:"ended"`
}

// TaskReport is one task. ExitCode is nil until the task ended; then it is
// the program's exit code or YARN's (negative) container exit status.
type TaskReport struct {
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
	// GPUs as last sampled by the task's launcher; SampledAt says when.
	GPUs       []GPUSample `json:"gpus,omitempty"`
	GPUSampled *time.Time  `json:"gpus_sampled_at,omitempty"`
	// Progress is what the task's program last wrote to its progress
	// file (EnvProgressFile); ProgressAt when the AM got it.
	Progress   *Progress  `json:"progress,omitempty"`
	ProgressAt *time.Time `json:"progress_at,omitempty"`
	// The program's CPU and memory as last sampled by the task's launcher
	// (absent until then); ProcessSampled says when.
	*ProcessSample
	ProcessSampled *time.Time `json:"process_sampled_at,omitempty"`
	// MemoryLimitBytes is the container's memory; NearMemoryLimit says the
	// program's peak RSS came close to it (appmaster/core.NearMemoryLimit):
	// YARN kills a container whose processes exceed it.
	MemoryLimitBytes int64 `json:"memory_limit_bytes,omitempty"`
	NearMemoryLimit  bool  `json:"near_memory_limit,omitempty"`
}

// ContainerLogsURL is a container's live logs on its NodeManager's web
// server (Hadoop's NMWebServices page /node/containerlogs/<id>/<user>);
// append "/stdout", "/stderr" or another file name.
func ContainerLogsURL(nodeHTTP, containerID, user string) string {
	if nodeHTTP == "" || containerID == "" || user == "" {
		return ""
	}
	return "http://" + nodeHTTP + "/node/containerlogs/" + containerID + "/" + user
}

// TensorBoardURL is the address of a TensorBoard task registered at
// host:port (it listens on its node's host address, NM_HOST).
func TensorBoardURL(host string, port int) string {
	return "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/"
}
