package jobreport

import "time"

// What a caller following a job sees (client.Submission.Wait): the changes it
// observed on the way, and how the application ended. The engine that
// follows the job (internal/follow) makes them and the public API hands
// them on as they are.

// Task changes an Event reports (Event.TaskChange).
const (
	TaskLaunched   = "launched"   // got a container
	TaskRegistered = "registered" // its launcher registered its address
	TaskEnded      = "ended"      // its program or container ended
	TaskProgress   = "progress"   // its program reported new progress (Task.Progress)
)

// Event is a change in the application's report that Wait observed.
type Event struct {
	Time        time.Time
	AppID       string
	State       string // YARN application state: NEW, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED
	FinalStatus string // UNDEFINED until the end, then SUCCEEDED, FAILED or KILLED
	TrackingURL string
	Diagnostics string
	// StateChanged and TrackingURLChanged say what is new; the first event
	// has StateChanged set.
	StateChanged, TrackingURLChanged bool

	// Task is set, and the fields above are not, for a task's change seen
	// on the AM's status page: TaskChange says which (TaskLaunched,
	// TaskRegistered, TaskEnded), Counts sums up all the tasks then.
	Task       *Task
	TaskChange string
	Counts     *Counts
	// Exit says, for TaskEnded, how the task's container ended, in words:
	// "exit code 137 (SIGKILL)", "preempted by the scheduler (exit status -102)",
	// and YARN's reason when the task failed with one (a launch the NodeManager
	// refused: "exit code 40: container-executor: docker image ...").
	Exit string
	// TensorBoardURL is, for TaskRegistered of a TensorBoard task, its address.
	TensorBoardURL string

	// Restart is set, and nothing else but Time and AppID, when the AM
	// restarted tasks: one line saying which restart and the failure
	// behind it, as the final diagnostics list it ("restart 1 after
	// worker:1 (container ... on ...) failed: exit code 7").
	Restart string

	// NearMemory is set, and nothing else but Time and AppID, once per
	// container whose program's peak RSS came near the container's memory
	// (Task.NearMemoryLimit): one line naming the task, its
	// container, the peak and the limit, before YARN kills it.
	NearMemory string

	// Waiting is set, and nothing else but Time and AppID, when tasks wait
	// for a container: at once (after a few seconds), then every
	// waitingEvery while they still wait. One line: what is awaited,
	// where, what the cluster offers the queue there and, for GPUs, who
	// holds them; For says how long the wait has been seen.
	Waiting string
	For     time.Duration

	// Warning is set, and nothing else but Time and AppID, for what the user should know that
	// does not change the job's course, in one line: a task's result that was not saved ("worker:0's
	// result file is 70000000 bytes, over the limit of 67108864 (64 MiB): not saved").
	Warning string

	// Notice is set, and nothing else but Time and AppID, when the
	// ResourceManager or the ApplicationMaster stops answering or answers
	// again: one line for the user (the CLI prints it on stderr), e.g.
	// "ResourceManager at rm:8032 not answering (connection refused); retrying".
	Notice string
}

// Result is how an application ended.
type Result struct {
	AppID         string `json:"app_id"`
	FinalStatus   string `json:"final_status"`
	State         string `json:"state"`
	Diagnostics   string `json:"diagnostics"`
	TrackingURL   string `json:"tracking_url"`
	UploadedBytes int64  `json:"uploaded_bytes"`
	// Tasks is each task as the AM's status page last showed it; empty
	// when the page could not be reached.
	Tasks []Task `json:"tasks,omitempty"`
	// AMAttempts is how many ApplicationMaster attempts YARN started (1
	// unless one died and Job.AMAttempts allowed another); 0 when no report
	// named one.
	AMAttempts int `json:"am_attempts,omitempty"`
	// Restarts is how many restarts the job had (Job.Restarts), as the
	// AM's status page last said; the diagnostics name the failure behind
	// each.
	Restarts int `json:"restarts"`
	// ResultFiles, for run --local only, are the result files the tasks' programs left
	// (TFYARN_RESULT_FILE), by task (worker:0): local paths that stay after the run.
	ResultFiles map[string]string `json:"result_files,omitempty"`
}

// Succeeded reports whether the job succeeded.
func (r *Result) Succeeded() bool { return r.FinalStatus == "SUCCEEDED" }
