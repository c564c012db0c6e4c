package contract

import (
	"encoding/json"
	"fmt"
	"time"
)

// Preemption warnings, as a task's program sees them. When YARN announces
// that it will preempt the task's container, the launcher writes one JSON
// line to the file named by EnvPreemptionFile, then sends the program's
// process group PreemptionSignal. The file does not exist before; it
// appears whole (written aside, then renamed), e.g.
//
//	{"deadline":"2026-11-25T20:31:07.412Z","deadline_unix_ms":1795638667412,"reason":"YARN's scheduler will preempt container container_1_0001_01_000002 (negotiable contract: it wants resources back)","task":"worker:0","container":"container_1_0001_01_000002"}
//
// deadline (RFC 3339, UTC, milliseconds) and deadline_unix_ms are the
// same moment: the earliest YARN may kill the container. The program
// checkpoints before it and keeps running: YARN ends the container, and
// the task restarts without counting toward --max-restarts.
const (
	// EnvPreemptionFile is set in every task program's environment: the
	// absolute path where the warning appears.
	EnvPreemptionFile = "TFYARN_PREEMPTION_FILE"
	// PreemptionSignal is sent to the program's process group right after
	// the file appears. SIGWINCH: its default action is to do nothing, so
	// a program that does not handle it runs on undisturbed; no language
	// runtime uses it for itself (Go's uses SIGURG, the JVM SIGQUIT and
	// SIGUSR2 among others), and a container has no terminal whose resizing
	// would send it otherwise.
	PreemptionSignal = "SIGWINCH"
)

// PreemptionFileName is the warning file's name in the task's working
// directory (the container's; under `run --local` the tasks share one,
// hence the task in the name).
func PreemptionFileName(taskType string, index int) string {
	return fmt.Sprintf("tfyarn-preemption-%s-%d.json", taskType, index)
}

// PreemptionWarning is the warning file's content.
type PreemptionWarning struct {
	Deadline       string `json:"deadline"`
	DeadlineUnixMS int64  `json:"deadline_unix_ms"`
	Reason         string `json:"reason"`
	Task           string `json:"task"`
	Container      string `json:"container"`
}

// NewPreemptionWarning fills a warning for deadline.
func NewPreemptionWarning(deadline time.Time, reason, task, container string) PreemptionWarning {
	return PreemptionWarning{
		Deadline:       deadline.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		DeadlineUnixMS: deadline.UnixMilli(),
		Reason:         reason, Task: task, Container: container,
	}
}

// Line is the warning as the file holds it: one JSON object and a newline.
func (w PreemptionWarning) Line() []byte {
	b, err := json.Marshal(w)
	if err != nil {
		panic(fmt.Sprintf("contract: encoding a preemption warning: %v", err)) // strings and an int only
	}
	return append(b, '\n')
}
