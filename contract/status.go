package contract

// StatusPath is the AM's status page in JSON (StatusReport). The client
// reaches it directly at the application report's host and rpc_port.
// It carries no secret: tasks, their states and addresses, exit codes.
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
}
