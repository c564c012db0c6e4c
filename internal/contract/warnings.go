package contract

import (
	"encoding/json"
	"fmt"
	"time"
)

// Warnings, as a task's program sees all of them. Every warning the
// ApplicationMaster gives a task (a preemption, idle GPUs) is one JSON
// line appended to the file named by EnvWarningsFile, e.g.
//
//	{"kind":"gpu-idle","time":"2026-11-25T20:31:07.412Z","time_unix_ms":1795638667412,"reason":"GPUs idle for 15m0s (0 % utilisation): the job fails at --gpu-idle-timeout 30m0s unless they work","ends_at":"2026-11-25T20:46:07.412Z","ends_at_unix_ms":1795639567412,"task":"worker:0","container":"container_1_0001_01_000002"}
//
// The file does not exist before the first warning. Each line is written
// with a single append, so a reader sees whole lines, the newline last: a
// line without its newline yet is not there yet. kind says which warning:
// WarningPreemption lines carry the deadline (as the preemption file does),
// WarningGPUIdle lines ends_at, when the job fails unless its GPUs work
// (none with --gpu-idle-action warn). Only a preemption also writes
// EnvPreemptionFile and sends PreemptionSignal, which programs take to
// mean "checkpoint now": idle GPUs call for no checkpoint, so they send no
// signal and leave that file alone.
const (
	// EnvWarningsFile is set in every task program's environment: the
	// absolute path of the warnings file.
	EnvWarningsFile = "TFYARN_WARNINGS_FILE"
	// MaxWarningLines bounds the lines a launcher appends to the file: the
	// machine gives a handful per idle period and one preemption per
	// container, so more is a job whose GPUs flap; the launcher logs the
	// rest instead.
	MaxWarningLines = 256
)

// WarningKind says what a warning warns of.
type WarningKind string

const (
	// WarningPreemption: YARN's scheduler will take the container back.
	WarningPreemption WarningKind = "preemption"
	// WarningGPUIdle: the job's GPUs have been idle half its
	// --gpu-idle-timeout, or all of it with --gpu-idle-action warn.
	WarningGPUIdle WarningKind = "gpu-idle"
)

// Known reports whether k is a kind this tfyarn gives.
func (k WarningKind) Known() bool { return k == WarningPreemption || k == WarningGPUIdle }

// WarningsFileName is the warnings file's name in the task's working
// directory (shared by the tasks under `run --local`, hence the task).
func WarningsFileName(taskType string, index int) string {
	return fmt.Sprintf("tfyarn-warnings-%s-%d.jsonl", taskType, index)
}

// Warning is one line of the warnings file. Time is when the launcher
// wrote it. Deadline (preemption) and EndsAt (gpu-idle) are left out when
// zero.
type Warning struct {
	Kind           WarningKind `json:"kind"`
	Time           string      `json:"time"`
	TimeUnixMS     int64       `json:"time_unix_ms"`
	Reason         string      `json:"reason"`
	Deadline       string      `json:"deadline,omitempty"`
	DeadlineUnixMS int64       `json:"deadline_unix_ms,omitempty"`
	EndsAt         string      `json:"ends_at,omitempty"`
	EndsAtUnixMS   int64       `json:"ends_at_unix_ms,omitempty"`
	Task           string      `json:"task"`
	Container      string      `json:"container"`
}

// NewWarning fills a warning of kind written at now; by is the
// preemption's deadline or the idle GPUs' end (zero: none).
func NewWarning(kind WarningKind, now, by time.Time, reason, task, container string) Warning {
	w := Warning{Kind: kind, Time: stamp(now), TimeUnixMS: now.UnixMilli(), Reason: reason, Task: task, Container: container}
	switch {
	case by.IsZero():
	case kind == WarningPreemption:
		w.Deadline, w.DeadlineUnixMS = stamp(by), by.UnixMilli()
	default:
		w.EndsAt, w.EndsAtUnixMS = stamp(by), by.UnixMilli()
	}
	return w
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// Line is the warning as the file holds it: one JSON object and a newline.
func (w Warning) Line() []byte {
	b, err := json.Marshal(w)
	if err != nil {
		panic(fmt.Sprintf("contract: encoding a warning: %v", err)) // strings and ints only
	}
	return append(b, '\n')
}
