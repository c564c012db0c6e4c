package core

import (
	"sort"
	"strings"
)

// Bounds of the stderr lines the job's diagnostics quote: enough for a
// Python traceback's last frame and its exception, not a log dump (the
// diagnostics land in the RM's state store and every status call).
const (
	diagStderrLines   = 3
	diagStderrLineLen = 240
	diagStderrTasks   = 3
)

// WithStderr adds to the job's diagnostics the last lines each failed task's
// program wrote to stderr, as tail (the driver's record of its launchers'
// reports) gives them: "boom" or "ValueError: bad input" says more than
// "exit code 1". A nil tail leaves diag alone.
func WithStderr(diag string, tasks []TaskStatus, tail func(TaskStatus) []string) string {
	if tail == nil {
		return diag
	}
	var failed []TaskStatus
	for _, t := range tasks {
		if t.State == TaskFailed {
			failed = append(failed, t)
		}
	}
	sort.SliceStable(failed, func(i, j int) bool { return failed[i].EndOrder < failed[j].EndOrder })
	var parts []string
	for _, t := range failed {
		if len(parts) == diagStderrTasks {
			break
		}
		if s := StderrSummary(tail(t)); s != "" && !quotesAlready(t.Failure, s) {
			parts = append(parts, "last stderr of "+t.Task.String()+": "+s)
		}
	}
	if len(parts) == 0 {
		return diag
	}
	return strings.Join(append([]string{diag}, parts...), "; ")
}

// quotesAlready reports whether failure quotes the program's own line that
// summary is (cut or not): its no-restart reason or its --fail-on-log
// line, often its last stderr line too, is not said twice.
func quotesAlready(failure, summary string) bool {
	line := strings.TrimSuffix(summary, "…")
	return strings.Contains(failure, noRestartSaid+line) || strings.Contains(failure, failOnLogSaid+line)
}

// StderrSummary is the last few non-blank lines of a stderr tail, trimmed
// and joined with " | " so the diagnostics stay one line.
func StderrSummary(tail []string) string {
	var lines []string
	for i := len(tail) - 1; i >= 0 && len(lines) < diagStderrLines; i-- {
		line := strings.TrimSpace(tail[i])
		if line == "" || strings.HasPrefix(line, "tfyarn task ") {
			continue
		}
		if len(line) > diagStderrLineLen {
			line = strings.ToValidUTF8(line[:diagStderrLineLen], "") + "…"
		}
		lines = append(lines, line)
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	return strings.Join(lines, " | ")
}
