// Package containerexit names YARN's special container exit statuses
// (Hadoop's ContainerExitStatus) and says in words how a container ended.
// It is pure: the AM's core decides with the statuses, and the AM's log, its
// diagnostics and the client's `run` lines describe them the same way.
package containerexit

import (
	"fmt"
	"strings"
)

// YARN's special container exit statuses; any other is the program's own
// exit code (128+N for death by signal N).
const (
	Success                    int32 = 0
	Invalid                    int32 = -1000
	Aborted                    int32 = -100
	DisksFailed                int32 = -101
	Preempted                  int32 = -102
	KilledExceededVMem         int32 = -103
	KilledExceededPMem         int32 = -104
	KilledByAppMaster          int32 = -105
	KilledByResourceManager    int32 = -106
	KilledAfterAppCompletion   int32 = -107
	KilledByContainerScheduler int32 = -108
)

var reasons = map[int32]string{
	Invalid:                    "exit status unknown to YARN",
	Aborted:                    "aborted by YARN: the container was released or its node was lost",
	DisksFailed:                "failed because the node's local or log disks went bad",
	Preempted:                  "preempted by the scheduler",
	KilledExceededVMem:         "killed for exceeding its virtual memory limit",
	KilledExceededPMem:         "killed for exceeding its physical memory limit; ask for more memory",
	KilledByAppMaster:          "killed by the ApplicationMaster",
	KilledByResourceManager:    "killed by the ResourceManager",
	KilledAfterAppCompletion:   "killed because the application finished",
	KilledByContainerScheduler: "killed by the NodeManager to make room for another container",
}

// signalNames covers the signals a task typically dies of; a shell reports
// death by signal N as exit code 128+N.
var signalNames = map[int32]string{1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}

// Describe explains a completed container's exit status in a few words:
// "exit code 3", "exit code 137 (SIGKILL)", "killed for exceeding its
// physical memory limit; ask for more memory (exit status -104)".
func Describe(status int32) string {
	if reason, ok := reasons[status]; ok {
		return fmt.Sprintf("%s (exit status %d)", reason, status)
	}
	if status < 0 {
		return fmt.Sprintf("exit status %d", status)
	}
	if sig, ok := signalNames[status-128]; ok {
		return fmt.Sprintf("exit code %d (%s)", status, sig)
	}
	return fmt.Sprintf("exit code %d", status)
}

// FromFailure is how a task's container ended, in words, as the AM core's Failure line of the task
// gives it ("worker:0 (container ... on ...) failed: " then this): the status described as
// Describe does and, when the core kept one, YARN's reason after it ("exit code 40:
// container-executor: docker image ... is not among the cluster's trusted registries"). Without
// such a line (the task succeeded or was stopped) it is Describe's alone. The AM's log and the
// client's task lines word a task's end this way.
func FromFailure(failure string, status int32) string {
	exit := Describe(status)
	if _, reason, ok := strings.Cut(failure, " failed: "+exit+": "); ok && reason != "" {
		return exit + ": " + reason
	}
	return exit
}
