package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/jobreport"
	"github.com/urfave/cli/v2"
)

// --output events: JSON Lines on stdout, one object per line, each written whole in one Write
// (stdout is unbuffered: a line is out as soon as it is written). docs/events.md is the contract;
// eventsVersion is its version, in every object's "v".
const (
	outputEvents  = "events"
	eventsVersion = 1
)

// streamOutputFlag is --output of the commands that follow a job (run, wait, submit).
func streamOutputFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: outputTable, Usage: "table, json, or events (JSON Lines as the job goes, docs/events.md)"}
}

// streamOutputFormat reads streamOutputFlag.
func streamOutputFormat(c *cli.Context) (string, error) {
	switch o := c.String("output"); o {
	case outputTable, outputJSON, outputEvents:
		return o, nil
	default:
		return "", usagef("--output %q: expected table, json or events", o)
	}
}

// wantsEvents reports whether args ask run, wait or submit for --output events: known before
// the flags are parsed, so that even an error parsing them ends the stream with an "error" line.
func wantsEvents(args []string) bool {
	cmd := -1
	for i, a := range args {
		if a == "--" {
			return false
		}
		if i > 0 && (a == "run" || a == "wait" || a == "submit") {
			cmd = i
			break
		}
	}
	if cmd < 0 {
		return false
	}
	rest := args[cmd+1:]
	for i, a := range rest {
		switch {
		case a == "--":
			return false
		case a == "--output=events", a == "-o=events", a == "-output=events":
			return true
		case (a == "--output" || a == "-o" || a == "-output") && i+1 < len(rest) && rest[i+1] == outputEvents:
			return true
		}
	}
	return false
}

// eventHeader starts every event object.
type eventHeader struct {
	V    int    `json:"v"`
	Type string `json:"type"`
	Time string `json:"time"` // RFC 3339, UTC
}

type submittedEvent struct {
	eventHeader
	AppID       string `json:"app_id"`
	Name        string `json:"name"`
	Queue       string `json:"queue"`
	User        string `json:"user"`
	TrackingURL string `json:"tracking_url"`
}

type stateEvent struct {
	eventHeader
	AppID       string `json:"app_id"`
	State       string `json:"state"`
	FinalStatus string `json:"final_status"`
	Diagnostics string `json:"diagnostics"`
	TrackingURL string `json:"tracking_url"`
}

type taskEvent struct {
	eventHeader
	Task        string `json:"task"`
	TaskType    string `json:"task_type"`
	Index       int    `json:"index"`
	Change      string `json:"change"` // launched, registered, ended
	State       string `json:"state"`
	Host        string `json:"host"`
	ContainerID string `json:"container_id"`
	ExitCode    *int32 `json:"exit_code"`
	Attempt     int    `json:"attempt"`
}

type progressEvent struct {
	eventHeader
	Task     string  `json:"task"`
	Fraction float64 `json:"fraction"`
	Step     int64   `json:"step,omitempty"`
	Total    int64   `json:"total,omitempty"`
}

type logEvent struct {
	eventHeader
	Task   string `json:"task"`
	Stream string `json:"stream"` // stdout, stderr
	Line   string `json:"line"`
}

type warningEvent struct {
	eventHeader
	Text string `json:"text"`
}

type resultEvent struct {
	eventHeader
	AppID       string            `json:"app_id"`
	Succeeded   bool              `json:"succeeded"`
	ExitCode    int               `json:"exit_code"`
	State       string            `json:"state"`
	FinalStatus string            `json:"final_status"`
	Diagnostics string            `json:"diagnostics"`
	Tasks       []jobreport.Task  `json:"tasks"`
	ResultFiles map[string]string `json:"result_files,omitempty"`
}

type errorEvent struct {
	eventHeader
	Message  string `json:"message"`
	ExitCode int    `json:"exit_code"`
}

func header(typ string, at time.Time) eventHeader {
	return eventHeader{V: eventsVersion, Type: typ, Time: at.UTC().Format(time.RFC3339Nano)}
}

// encodeEvent is what an event of following a job (client.Event) is on the stream: a task's
// change, its progress, the application's state, or a warning; nothing for what it does not tell.
func encodeEvent(ev client.Event) []any {
	at := ev.Time
	if at.IsZero() {
		at = time.Now()
	}
	var out []any
	if t := ev.Task; t != nil {
		if ev.TaskChange == jobreport.TaskProgress {
			if t.Progress == nil {
				return nil
			}
			return []any{progressEvent{header("progress", at), t.Task, t.Progress.Fraction, t.Progress.Step, t.Progress.Total}}
		}
		return []any{taskEvent{header("task", at), t.Task, t.Type, t.Index, ev.TaskChange, t.State, t.Host, t.ContainerID, t.ExitCode, t.Attempt}}
	}
	for _, text := range []string{ev.Restart, ev.NearMemory, ev.Warning, ev.Notice} {
		if text != "" {
			out = append(out, warningEvent{header("warning", at), text})
		}
	}
	if ev.Waiting != "" {
		out = append(out, warningEvent{header("warning", at), fmt.Sprintf("%s (for %s)", ev.Waiting, ev.For.Round(time.Second))})
	}
	if ev.StateChanged || ev.TrackingURLChanged {
		out = append(out, stateEvent{header("state", at), ev.AppID, ev.State, ev.FinalStatus, ev.Diagnostics, ev.TrackingURL})
	}
	return out
}

// encodeResult is the stream's last line for a job that ran: how it ended.
func encodeResult(res *client.Result, at time.Time) resultEvent {
	code := exitOK
	if !res.Succeeded() {
		code = exitJobFailed
	}
	tasks := res.Tasks
	if tasks == nil {
		tasks = []jobreport.Task{}
	}
	return resultEvent{header("result", at), res.AppID, res.Succeeded(), code, res.State, res.FinalStatus, res.Diagnostics, tasks, res.ResultFiles}
}

// eventStream writes the events of one command; safe for the log followers' goroutines.
type eventStream struct {
	mu    sync.Mutex
	w     io.Writer
	ended bool // the last line (result or error) is out: nothing follows it
}

func (s *eventStream) write(events ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ev := range events {
		if s.ended {
			return
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // lines are read by programs, not pasted into HTML
		if err := enc.Encode(ev); err != nil {
			continue // the types above always encode
		}
		_, _ = s.w.Write(b.Bytes()) // one line, with its newline, in one Write
		switch ev.(type) {
		case resultEvent, errorEvent:
			s.ended = true
		}
	}
}

// fail ends the stream with an error line, unless it ended already (a job's result, whose
// exit code 1 is no error of tfyarn's).
func (s *eventStream) fail(msg string, code int) {
	s.write(errorEvent{header("error", time.Now()), msg, code})
}

// logOutput is the FollowOutput of --output events: each line of a task's file is a log event.
func (s *eventStream) logOutput() client.FollowOutput {
	return func(task, file string) io.Writer { return &logLines{s: s, task: task, stream: file} }
}

// logLines turns whole lines written to it into log events (a line without its newline waits for
// the rest, up to Flush).
type logLines struct {
	s            *eventStream
	task, stream string
	partial      []byte
}

func (l *logLines) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	for {
		i := strings.IndexByte(string(l.partial), '\n')
		if i < 0 {
			return len(p), nil
		}
		l.s.write(logEvent{header("log", time.Now()), l.task, l.stream, strings.TrimSuffix(string(l.partial[:i]), "\r")})
		l.partial = l.partial[i+1:]
	}
}

// Flush sends a last line that had no newline.
func (l *logLines) Flush() {
	if len(l.partial) > 0 {
		l.s.write(logEvent{header("log", time.Now()), l.task, l.stream, string(l.partial)})
		l.partial = nil
	}
}

// localLogLines is run --local's output under --output events: its tasks' lines, prefixed with
// their task ("[worker:1] "), become log events of stream; the driver's own ("[tfyarn] ") go to
// human as they are.
type localLogLines struct {
	s       *eventStream
	stream  string
	human   io.Writer
	partial []byte
}

func (l *localLogLines) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	for {
		i := strings.IndexByte(string(l.partial), '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(l.partial[:i])
		l.partial = l.partial[i+1:]
		task, text, ok := strings.Cut(strings.TrimPrefix(line, "["), "] ")
		if !strings.HasPrefix(line, "[") || !ok || task == "tfyarn" {
			fmt.Fprintln(l.human, line)
			continue
		}
		l.s.write(logEvent{header("log", time.Now()), task, l.stream, text})
	}
}
