package appmaster

import (
	"regexp"
	"strings"
)

// maxContainerDiagnostics caps ContainerDiagnostics: enough for an
// exception chain's messages, not a log dump (the job's diagnostics land in
// the RM's state store and every status call).
const maxContainerDiagnostics = 500

var (
	// diagTimestamp is the "[2026-11-23 09:19:10.852]" YARN puts before
	// each diagnostic it appends to a container's.
	diagTimestamp = regexp.MustCompile(`^\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\]\s*`)
	// diagNoise are lines that say nothing to a user: Java stack frames,
	// "... 12 more", the process-tree dump of a memory kill.
	diagNoise = regexp.MustCompile(`^(?:at [\w$.<>/]+\(.*\)?$|\.\.\. \d+ more$|\|-|Dump of the process-tree for )`)
)

// ContainerDiagnostics reduces YARN's diagnostics of a completed container
// to one line that keeps its whole reason: every message and exception
// line in order, without timestamps, Java stack frames, process-tree dumps
// or repeats, whitespace collapsed, lines joined with " | ", at most
// maxContainerDiagnostics bytes. YARN's diagnostics of a localization
// failure start with a timestamp alone on its line, so the first line by
// itself says nothing.
func ContainerDiagnostics(s string) string {
	var lines []string
	seen := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		for {
			loc := diagTimestamp.FindStringIndex(line)
			if loc == nil {
				break
			}
			line = line[loc[1]:]
		}
		line = strings.Join(strings.Fields(line), " ")
		if line == "" || diagNoise.MatchString(line) || seen[line] {
			continue
		}
		seen[line] = true
		lines = append(lines, line)
	}
	out := strings.Join(lines, " | ")
	if len(out) > maxContainerDiagnostics {
		out = strings.ToValidUTF8(out[:maxContainerDiagnostics], "") + "…"
	}
	return out
}
