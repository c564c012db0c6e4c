package rendezvous

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Limits on what one message may carry. MaxBodyBytes bounds every request
// body; the others keep one field from filling it with junk the AM would
// then print.
const (
	MaxBodyBytes     = 64 << 10
	MaxStderrLines   = 100
	MaxStderrLineLen = 1024
	maxHostLen       = 255
	maxIDLen         = 128
	maxReasonLen     = 1024
	maxSignalLen     = 32
)

// Registration is what a launcher tells the AM once it holds its port.
type Registration struct {
	Task        taskspec.TaskID
	Host        string // resolvable by the other nodes (the NodeManager's host)
	Port        int
	ContainerID string // YARN's container_… id; empty in --local mode
	PID         int    // the launcher's pid, for the AM's diagnostics
	// ControlPort is where the launcher, on Host, listens for a later AM
	// attempt's call (package amattempt); 0 for none.
	ControlPort int
}

// Addr is the task's "host:port" as it goes into the cluster spec.
func (r Registration) Addr() string { return net.JoinHostPort(r.Host, strconv.Itoa(r.Port)) }

// ExitReport is how a task's program ended.
type ExitReport struct {
	Task        taskspec.TaskID
	ContainerID string
	// ExitCode is the program's exit code, 128+N when signal N killed it,
	// or -1 when it could not be started.
	ExitCode int
	// Stopped is true when the program ended after the AM's stop order.
	Stopped bool
	// Signal names the signal the launcher received from outside (its
	// NodeManager killing the container: memory limit, preemption, a lost
	// node) and passed to the program, e.g. "SIGTERM"; empty otherwise.
	// YARN's report of the container then tells why, not the exit code.
	Signal string
	// StderrTail is the last lines the program wrote to stderr, oldest
	// first, for the job's diagnostics.
	StderrTail []string
	// LogRule, when set, is the rule a line of the program's stderr
	// matched ("fail-on-log", "exclude-node-on-log"), LogLine that line:
	// the launcher ended the program for it.
	LogRule, LogLine string
	// NoRestart, when set, is the line the program left in its
	// no-restart file (contract.EnvNoRestartFile) before failing: why a
	// restart cannot help. One line of printable text, at most
	// MaxStderrLineLen bytes.
	NoRestart string
}

// The rules an ExitReport's LogRule names.
const (
	LogRuleFail        = "fail-on-log"
	LogRuleExcludeNode = "exclude-node-on-log"
)

// StopOrder is the AM telling a task to end its program.
type StopOrder struct {
	Reason string
}

type wireRegistration struct {
	Task        string `json:"task"`
	Host        string `json:"host"`
	Port        int    `json:"port"`
	ContainerID string `json:"container_id,omitempty"`
	PID         int    `json:"pid,omitempty"`
	ControlPort int    `json:"control_port,omitempty"`
}

type wireExit struct {
	Task        string   `json:"task"`
	ContainerID string   `json:"container_id,omitempty"`
	ExitCode    int      `json:"exit_code"`
	Stopped     bool     `json:"stopped,omitempty"`
	Signal      string   `json:"signal,omitempty"`
	StderrTail  []string `json:"stderr_tail,omitempty"`
	LogRule     string   `json:"log_rule,omitempty"`
	LogLine     string   `json:"log_line,omitempty"`
	NoRestart   string   `json:"no_restart,omitempty"`
}

type wireSpec struct {
	Cluster taskspec.ClusterSpec `json:"cluster"`
	Program *wireProgram         `json:"program,omitempty"`
}

type wireStop struct {
	Reason string `json:"reason"`
}

type wireError struct {
	Code  string `json:"code"`
	Error string `json:"error"`
}

func encodeRegistration(r Registration) []byte {
	return mustJSON(wireRegistration{Task: r.Task.String(), Host: r.Host, Port: r.Port, ContainerID: r.ContainerID, PID: r.PID, ControlPort: r.ControlPort})
}

// DecodeRegistration parses and validates a registration body. It is the
// server's first look at bytes from the network (after the signature
// check), so it accepts nothing it has not checked.
func DecodeRegistration(body []byte) (Registration, error) {
	var w wireRegistration
	if err := decodeJSON(body, &w); err != nil {
		return Registration{}, fmt.Errorf("registration: %w", err)
	}
	task, err := parseTask(w.Task)
	if err != nil {
		return Registration{}, fmt.Errorf("registration: %w", err)
	}
	r := Registration{Task: task, Host: w.Host, Port: w.Port, ContainerID: w.ContainerID, PID: w.PID, ControlPort: w.ControlPort}
	if err := r.validate(); err != nil {
		return Registration{}, fmt.Errorf("registration of %s: %w", task, err)
	}
	return r, nil
}

func (r Registration) validate() error {
	if err := checkHost(r.Host); err != nil {
		return err
	}
	if r.Port < 1 || r.Port > 65535 {
		return fmt.Errorf("port %d is not in 1-65535", r.Port)
	}
	if err := checkID("container id", r.ContainerID); err != nil {
		return err
	}
	if r.PID < 0 {
		return fmt.Errorf("negative pid %d", r.PID)
	}
	if r.ControlPort < 0 || r.ControlPort > 65535 {
		return fmt.Errorf("control port %d is not in 0-65535", r.ControlPort)
	}
	return nil
}

func encodeExit(e ExitReport) []byte {
	return mustJSON(wireExit{Task: e.Task.String(), ContainerID: e.ContainerID, ExitCode: e.ExitCode, Stopped: e.Stopped, Signal: e.Signal, StderrTail: e.StderrTail, LogRule: e.LogRule, LogLine: e.LogLine, NoRestart: e.NoRestart})
}

// DecodeExitReport parses and validates an exit report body.
func DecodeExitReport(body []byte) (ExitReport, error) {
	var w wireExit
	if err := decodeJSON(body, &w); err != nil {
		return ExitReport{}, fmt.Errorf("exit report: %w", err)
	}
	task, err := parseTask(w.Task)
	if err != nil {
		return ExitReport{}, fmt.Errorf("exit report: %w", err)
	}
	if err := checkID("container id", w.ContainerID); err != nil {
		return ExitReport{}, fmt.Errorf("exit report of %s: %w", task, err)
	}
	if len(w.Signal) > maxSignalLen || strings.ContainsFunc(w.Signal, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return ExitReport{}, fmt.Errorf("exit report of %s: malformed signal name", task)
	}
	if len(w.StderrTail) > MaxStderrLines {
		return ExitReport{}, fmt.Errorf("exit report of %s: %d stderr lines, at most %d", task, len(w.StderrTail), MaxStderrLines)
	}
	for _, l := range w.StderrTail {
		if len(l) > MaxStderrLineLen {
			return ExitReport{}, fmt.Errorf("exit report of %s: a stderr line of %d bytes, at most %d", task, len(l), MaxStderrLineLen)
		}
	}
	if w.LogRule != "" && w.LogRule != LogRuleFail && w.LogRule != LogRuleExcludeNode || len(w.LogLine) > MaxStderrLineLen {
		return ExitReport{}, fmt.Errorf("exit report of %s: malformed log rule", task)
	}
	if len(w.NoRestart) > MaxStderrLineLen || strings.ContainsFunc(w.NoRestart, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return ExitReport{}, fmt.Errorf("exit report of %s: malformed no-restart reason (one printable line of at most %d bytes)", task, MaxStderrLineLen)
	}
	return ExitReport{Task: task, ContainerID: w.ContainerID, ExitCode: w.ExitCode, Stopped: w.Stopped, Signal: w.Signal, StderrTail: w.StderrTail,
		LogRule: w.LogRule, LogLine: w.LogLine, NoRestart: w.NoRestart}, nil
}

// ClipStderr makes lines fit an ExitReport: the last MaxStderrLines, each
// cut to MaxStderrLineLen bytes on a rune boundary.
func ClipStderr(lines []string) []string {
	if len(lines) > MaxStderrLines {
		lines = lines[len(lines)-MaxStderrLines:]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) > MaxStderrLineLen {
			l = strings.ToValidUTF8(l[:MaxStderrLineLen-len("…")], "") + "…"
		}
		out[i] = l
	}
	return out
}

func decodeSpec(body []byte) (TaskSpec, error) {
	var w wireSpec
	if err := decodeJSONLimit(body, &w, maxResponseBytes); err != nil {
		return TaskSpec{}, fmt.Errorf("cluster spec: %w", err)
	}
	if w.Cluster == nil {
		return TaskSpec{}, errors.New("cluster spec: missing \"cluster\"")
	}
	ts := TaskSpec{Cluster: w.Cluster}
	if w.Program != nil {
		p, err := w.Program.program()
		if err != nil {
			return TaskSpec{}, fmt.Errorf("cluster spec: %w", err)
		}
		ts.Program = &p
	}
	return ts, nil
}

func decodeStop(body []byte) (StopOrder, error) {
	var w wireStop
	if err := decodeJSON(body, &w); err != nil {
		return StopOrder{}, fmt.Errorf("stop order: %w", err)
	}
	return StopOrder(w), nil
}

// decodeJSON insists on exactly one JSON object: trailing data would mean
// the signed body and the decoded one differ in what they say.
func decodeJSON(body []byte, v any) error { return decodeJSONLimit(body, v, MaxBodyBytes) }

func decodeJSONLimit(body []byte, v any, limit int) error {
	if len(body) > limit {
		return fmt.Errorf("body of %d bytes exceeds %d", len(body), limit)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("bad JSON: trailing data after the object")
	}
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("rendezvous: encoding %T: %v", v, err)) // only plain structs of strings and ints get here
	}
	return b
}

func parseTask(s string) (taskspec.TaskID, error) {
	if s == "" {
		return taskspec.TaskID{}, errors.New("missing task")
	}
	if len(s) > maxIDLen {
		return taskspec.TaskID{}, fmt.Errorf("task name of %d bytes", len(s))
	}
	return taskspec.ParseTaskID(s)
}

func checkHost(h string) error {
	if h == "" {
		return errors.New("missing host")
	}
	if len(h) > maxHostLen {
		return fmt.Errorf("host name of %d bytes, at most %d", len(h), maxHostLen)
	}
	for _, r := range h {
		// Host names and IP literals only: a colon is allowed for IPv6.
		if !(r == '.' || r == '-' || r == ':' || r == '_' || r == '%' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return fmt.Errorf("host %q has a character not allowed in a host name", h)
		}
	}
	return nil
}

func checkID(what, s string) error {
	if len(s) > maxIDLen {
		return fmt.Errorf("%s of %d bytes, at most %d", what, len(s), maxIDLen)
	}
	for _, r := range s {
		if r <= ' ' || r >= 0x7f {
			return fmt.Errorf("%s %q has a character outside printable ASCII", what, s)
		}
	}
	return nil
}
