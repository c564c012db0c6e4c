package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/jobreport"
)

// TestEncodeEvent: what each kind of client.Event is on the --output events stream, as
// docs/events.md lists the objects.
func TestEncodeEvent(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 500_000_000, time.UTC)
	code := int32(3)
	task := &jobreport.Task{Task: "worker:1", Type: "worker", Index: 1, State: "failed", Host: "nm1", ContainerID: "container_1_0001_01_000003", ExitCode: &code, Attempt: 2,
		Progress: &jobreport.Progress{Fraction: 0.25, Step: 25, Total: 100}}
	const h = `"v":1,"type":`
	for name, tc := range map[string]struct {
		ev   client.Event
		want []string
	}{
		"state": {client.Event{Time: at, AppID: "application_1_0001", State: "RUNNING", FinalStatus: "UNDEFINED", TrackingURL: "http://rm/proxy/x/", StateChanged: true},
			[]string{`{` + h + `"state","time":"2026-11-29T12:00:00.5Z","app_id":"application_1_0001","state":"RUNNING","final_status":"UNDEFINED","diagnostics":"","tracking_url":"http://rm/proxy/x/"}`}},
		"task ended": {client.Event{Time: at, Task: task, TaskChange: jobreport.TaskEnded},
			[]string{`{` + h + `"task","time":"2026-11-29T12:00:00.5Z","task":"worker:1","task_type":"worker","index":1,"change":"ended","state":"failed","host":"nm1","container_id":"container_1_0001_01_000003","exit_code":3,"attempt":2}`}},
		"progress": {client.Event{Time: at, Task: task, TaskChange: jobreport.TaskProgress},
			[]string{`{` + h + `"progress","time":"2026-11-29T12:00:00.5Z","task":"worker:1","fraction":0.25,"step":25,"total":100}`}},
		"restart": {client.Event{Time: at, Restart: "restart 1 after worker:1 failed"},
			[]string{`{` + h + `"warning","time":"2026-11-29T12:00:00.5Z","text":"restart 1 after worker:1 failed"}`}},
		"result not saved": {client.Event{Time: at, Warning: "worker:1's result file is 70000000 bytes"},
			[]string{`{` + h + `"warning","time":"2026-11-29T12:00:00.5Z","text":"worker:1's result file is 70000000 bytes"}`}},
		"waiting": {client.Event{Time: at, Waiting: "worker:1 waits for a container", For: 3 * time.Second},
			[]string{`{` + h + `"warning","time":"2026-11-29T12:00:00.5Z","text":"worker:1 waits for a container (for 3s)"}`}},
		"nothing to tell": {client.Event{Time: at, AppID: "application_1_0001"}, nil},
	} {
		var buf bytes.Buffer
		s := &eventStream{w: &buf}
		s.write(encodeEvent(tc.ev)...)
		var got []string
		if buf.Len() > 0 {
			got = strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		}
		require.Equal(t, tc.want, got, name)
	}
}

// TestEventStreamEnds: the result (or error) line is the last: nothing follows it, an error
// after a job's result included.
func TestEventStreamEnds(t *testing.T) {
	var buf bytes.Buffer
	s := &eventStream{w: &buf}
	out := s.logOutput()("worker:0", "stdout")
	_, _ = out.Write([]byte("one\ntw"))
	_, _ = out.Write([]byte("o\nthree"))
	out.(interface{ Flush() }).Flush()
	s.write(encodeResult(&client.Result{AppID: "application_1_0001", State: "FINISHED", FinalStatus: "FAILED"}, time.Now()))
	s.fail("ignored", 1)
	s.write(warningEvent{header("warning", time.Now()), "ignored"})
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, lines, 4)
	for i, want := range []string{"one", "two", "three"} {
		var ev logEvent
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &ev))
		require.Equal(t, logEvent{eventHeader: ev.eventHeader, Task: "worker:0", Stream: "stdout", Line: want}, ev)
		require.Equal(t, "log", ev.Type)
	}
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[3]), &res))
	require.Equal(t, "result", res["type"])
	require.Equal(t, false, res["succeeded"])
	require.Equal(t, float64(1), res["exit_code"])
	require.Equal(t, []any{}, res["tasks"])
}

func TestWantsEvents(t *testing.T) {
	for args, want := range map[string]bool{
		"tfyarn run --output events -- x":                  true,
		"tfyarn --conf-dir d wait app --output=events":     true,
		"tfyarn submit -o events --worker 1c -- x":         true,
		"tfyarn run --worker 1c -- prog --output events":   false,
		"tfyarn status app --output events":                false,
		"tfyarn run --output json":                         false,
		"tfyarn --conf-dir run status app --output events": true, // a directory named run: close enough, status refuses events anyway
	} {
		require.Equal(t, want, wantsEvents(strings.Fields(args)), args)
	}
}

// TestRunEventsErrorLine: a usage error under --output events ends the stream with one "error"
// line on stdout (exit 2), the one-line message on stderr too.
func TestRunEventsErrorLine(t *testing.T) {
	noCluster(t)
	stdout, stderr, code := runCLI(t, "run", "--local", "--worker", "2x1q", "--output", "events", "--", "true")
	require.Equal(t, exitUsage, code)
	require.Equal(t, "tfyarn: worker spec \"2x1q\": bad vcores \"1q\"; expected <N>c, e.g. 4c\n", stderr)
	var ev errorEvent
	require.NoError(t, json.Unmarshal([]byte(stdout), &ev), stdout)
	require.Equal(t, errorEvent{eventHeader: ev.eventHeader, Message: `worker spec "2x1q": bad vcores "1q"; expected <N>c, e.g. 4c`, ExitCode: 2}, ev)
	require.Equal(t, eventHeader{V: 1, Type: "error", Time: ev.Time}, ev.eventHeader)
	_, err := time.Parse(time.RFC3339Nano, ev.Time)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(stdout, "\n"))
}

// TestRunLocalEvents: run --local --output events: the tasks' lines as log events, then the
// result with the result files; nothing else on stdout.
func TestRunLocalEvents(t *testing.T) {
	noCluster(t)
	stdout, stderr, code := runCLI(t, "run", "--local", "--worker", "2x1c", "--output", "events", "--", "sh", "-c", `echo "out of $TFYARN_TASK"; echo "res $TFYARN_TASK" > "$TFYARN_RESULT_FILE"; exit "$TFYARN_TASK_INDEX"`)
	require.Equal(t, exitJobFailed, code, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	seen := map[string]bool{}
	for i, l := range lines {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		require.Equal(t, float64(1), ev["v"])
		if ev["type"] == "log" && ev["stream"] == "stdout" {
			seen[ev["task"].(string)+" "+ev["line"].(string)] = true
		}
		if i < len(lines)-1 {
			require.Equal(t, "log", ev["type"], l)
			continue
		}
		require.Equal(t, "result", ev["type"])
		require.Equal(t, false, ev["succeeded"])
		require.Equal(t, float64(1), ev["exit_code"])
		files := ev["result_files"].(map[string]any)
		require.Len(t, files, 2)
		t.Cleanup(func() { os.RemoveAll(filepath.Dir(files["worker:0"].(string))) })
	}
	require.True(t, seen["worker:0 out of worker:0"] && seen["worker:1 out of worker:1"], stdout)
	require.Contains(t, stderr, "[tfyarn] ", "the run's own lines on stderr")
}
