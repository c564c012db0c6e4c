package contract

import (
	"net"
	"strconv"
	"time"

	"github.com/tfyarn/tfyarn/jobreport"
)

// StatusPath is the AM's status page in JSON (StatusReport). The client
// reaches it directly at the application report's host and rpc_port, with
// a request signed under the job's status key (StatusSigningKey), and
// checks the AM's signed answer: the report names the command line,
// diagnostics with stderr tails and every task's address, which only the
// job's owner may read.
const StatusPath = "/status"

// A status request with StatusWaitParam=StatusWaitFinal is answered once
// the report is final, or after StatusWaitMax with the report as it is
// then: the client learns the job's end without polling faster.
// StatusWaitMax stays under the client's timeout for one fetch.
const (
	StatusWaitParam = "wait"
	StatusWaitFinal = "final"
	StatusWaitMax   = 2 * time.Second
)

// The status report's types are defined once, in the public package
// jobreport, which the client hands to its callers as they are: these are
// their names on the AM's side (aliases, not copies).
type (
	// StatusReport is the job as the AM sees it.
	StatusReport = jobreport.Report
	// JobInfo is what the job was asked to run.
	JobInfo = jobreport.JobInfo
	// GroupInfo is one task group.
	GroupInfo = jobreport.GroupInfo
	// GPUSample is one GPU as a task's launcher last sampled it.
	GPUSample = jobreport.GPUSample
	// ProcessSample is a task's program as its launcher last sampled it.
	ProcessSample = jobreport.ProcessSample
	// TaskCounts sums the tasks up.
	TaskCounts = jobreport.Counts
	// TaskReport is one task.
	TaskReport = jobreport.Task
	// TaskAttempt is one of a task's containers.
	TaskAttempt = jobreport.TaskAttempt
	// ExcludedNode is a node the job's containers stay off, and why.
	ExcludedNode = jobreport.ExcludedNode
)

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
