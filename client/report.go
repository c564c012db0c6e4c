package client

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// The job as its ApplicationMaster reports it, on its status page while it
// runs and in its history record once it ended. These types are that JSON
// document's Go form (the same keys `tfyarn status --output json` shows).

// JobReport is the job as the ApplicationMaster sees it.
type JobReport struct {
	AppID string `json:"app_id"`
	// Final is set once the job is decided; FinalStatus and Diagnostics
	// then say how.
	Final       bool         `json:"final"`
	FinalStatus string       `json:"final_status,omitempty"`
	Diagnostics string       `json:"diagnostics,omitempty"`
	Counts      TaskCounts   `json:"counts"`
	Tasks       []TaskResult `json:"tasks"`
	// Restarts is how many restarts the job has had (Job.Restarts);
	// RestartCauses says, one line each, the failure behind each.
	Restarts      int      `json:"restarts"`
	RestartCauses []string `json:"restart_causes,omitempty"`
	// Waiting says, one line per task group, what tasks wait for a
	// container longer than a few seconds, where, and what the cluster
	// offers the queue there.
	Waiting []string `json:"waiting,omitempty"`
	// User submitted the job; Job describes it (nil from an AM that does
	// not say).
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
}

// JobInfo is what the job was asked to run: the command, the task groups
// in the spec grammar, the queue, node labels and placement constraints in
// words.
type JobInfo struct {
	Name      string          `json:"name,omitempty"`
	Queue     string          `json:"queue,omitempty"`
	NodeLabel string          `json:"node_label,omitempty"`
	Command   string          `json:"command"`
	Groups    []TaskGroupInfo `json:"groups"`
	Spread    string          `json:"spread,omitempty"`
	Affinity  string          `json:"affinity,omitempty"`
}

// TaskGroupInfo is one task group: "worker", "2x1c,1g", its node label.
type TaskGroupInfo struct {
	Type      string `json:"type"`
	Spec      string `json:"spec"`
	NodeLabel string `json:"node_label,omitempty"`
}

// TaskCounts sums the tasks up: how many there are, have a container,
// registered their address, run, ended.
type TaskCounts struct {
	Total      int `json:"total"`
	Allocated  int `json:"allocated"`
	Registered int `json:"registered"`
	Running    int `json:"running"`
	Ended      int `json:"ended"`
}

// TaskResult is one task: type, index, state, the address it registered
// (host, port), its container and node, and its exit code once it ended
// (the program's, or YARN's negative container exit status).
type TaskResult struct {
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
	// Restarts is how many times this task was started again.
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
	// Progress is what the task's program last reported; ProgressAt when
	// the AM got it.
	Progress   *TaskProgress `json:"progress,omitempty"`
	ProgressAt *time.Time    `json:"progress_at,omitempty"`
	// The program's CPU and memory as last sampled by the task's launcher
	// (absent until then); ProcessSampled says when.
	*ProcessSample
	ProcessSampled *time.Time `json:"process_sampled_at,omitempty"`
	// MemoryLimitBytes is the container's memory; NearMemoryLimit says the
	// program's peak RSS came close to it: YARN kills a container whose
	// processes exceed it.
	MemoryLimitBytes int64 `json:"memory_limit_bytes,omitempty"`
	NearMemoryLimit  bool  `json:"near_memory_limit,omitempty"`
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

// ProcessSample is a task's program (its whole process tree) as its
// launcher last sampled it: CPUPercent over the last interval (100 for one
// core kept busy), CPU seconds so far, resident memory, the most seen, and
// how many processes.
type ProcessSample struct {
	CPUPercent   float64 `json:"cpu_percent"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	RSSBytes     int64   `json:"rss_bytes"`
	PeakRSSBytes int64   `json:"peak_rss_bytes"`
	Processes    int     `json:"processes"`
}

// TaskProgress is a task's training progress as its program wrote it:
// Fraction always (0..1); Step and Total for step/total (Total 0
// otherwise).
type TaskProgress struct {
	Fraction float64 `json:"fraction"`
	Step     int64   `json:"step,omitempty"`
	Total    int64   `json:"total,omitempty"`
}

// JobProgress is the job's training progress: that of the task that
// speaks for the job (Task: the chief, else worker:0, else "workers" for
// the slowest worker), its rate over the last minute (in steps, or in
// fraction of the whole) and the time left at that rate.
type JobProgress struct {
	TaskProgress
	Task              string     `json:"task"`
	StepsPerSecond    *float64   `json:"steps_per_second,omitempty"`
	FractionPerSecond *float64   `json:"fraction_per_second,omitempty"`
	ETASeconds        *float64   `json:"eta_seconds,omitempty"`
	UpdatedAt         *time.Time `json:"updated_at,omitempty"`
}

// fromContract turns the AM's report types into the public ones: the same
// JSON document (a test keeps the two sets of types in step).
func fromContract[T any](v any) T {
	var out T
	data, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(data, &out)
	}
	if err != nil {
		// Both sides are plain data of the same shape: this cannot fail.
		panic("client: converting a status report: " + err.Error())
	}
	return out
}

func publicReport(r *contract.StatusReport) *JobReport {
	if r == nil {
		return nil
	}
	rep := fromContract[JobReport](r)
	return &rep
}

func publicTask(t contract.TaskReport) TaskResult { return fromContract[TaskResult](t) }

// Status is an application as the ResourceManager reports it and, for a
// tfyarn application, its job as its ApplicationMaster reports it.
type Status struct {
	Application
	// History is an ended application's record, which its AM wrote to
	// HDFS (/user/<user>/.tfyarn/history/<app>.json); HistoryError says,
	// in one line, why there is none.
	History      *JobReport
	HistoryError string
	// Live is a running application's report from its AM; nil when it
	// could not be read (no AM yet, not a tfyarn application, or another
	// user's job: only its owner holds the key the AM asks for).
	Live *JobReport
}

// Status reports an application: the ResourceManager's report, and the
// history record of an ended one or the live report of a running one.
func (c *Client) Status(ctx context.Context, appID string) (_ *Status, err error) {
	defer aboutApp(&err, appID)
	r, err := c.report(ctx, appID)
	if err != nil {
		return nil, err
	}
	st := &Status{Application: *newApplication(r)}
	if yarn.IsTerminal(r.GetYarnApplicationState()) {
		st.History, st.HistoryError = c.readHistory(ctx, st.User, st.ID)
		return st, nil
	}
	fs, err := c.hdfsFS(ctx)
	if err != nil {
		return st, nil
	}
	key, err := readStatusKey(ctx, fs, r)
	if err != nil {
		return st, nil
	}
	if live, err := liveStatus(ctx, r, key); err == nil && live.AppID == st.ID {
		st.Live = publicReport(live)
	}
	return st, nil
}

// readHistory reads the history record the application's AM left on HDFS;
// the error is one line for users (a non-tfyarn application has none).
func (c *Client) readHistory(ctx context.Context, user, appID string) (*JobReport, string) {
	var rep JobReport
	fs, err := c.hdfsFS(ctx)
	if err == nil {
		var data []byte
		if data, err = fs.ReadHistory(ctx, user, appID); err == nil {
			err = json.Unmarshal(data, &rep)
		}
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, "no history record at " + hdfs.HistoryPath(user, appID) + " (not a tfyarn application, or its AM did not end normally)"
	case errors.Is(err, os.ErrPermission):
		return nil, "the history record at " + hdfs.HistoryPath(user, appID) + " is private to " + user + " (the command line and stderr tails are theirs)"
	case err != nil:
		return nil, "reading the history record: " + err.Error()
	}
	return &rep, ""
}
