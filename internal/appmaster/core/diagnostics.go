package core

import (
	"fmt"
	"path"
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
// to one line that keeps its whole reason: every message in order, without
// timestamps, Java stack frames, process-tree dumps or repeats, whitespace
// collapsed, at most maxContainerDiagnostics bytes. A Java exception chain
// (a localization failure) becomes its messages joined outer to inner with
// ": ", the NodeManager's local paths shortened to the file's name; other
// lines are joined with " | ". YARN's diagnostics of a localization failure
// start with a timestamp alone on its line, so the first line by itself
// says nothing.
func ContainerDiagnostics(s string) string {
	var parts []string // lines, an exception chain being one part
	chain := -1        // index in parts of the current chain, -1 for none
	seen := map[string]bool{}
	var classOnly []string // exceptions without a message
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
		if line == "" || diagNoise.MatchString(line) {
			continue
		}
		line = diagLocalPath.ReplaceAllString(line, "$1")
		line = plainPublicDownload(line)
		msg, isException := exceptionMessage(line)
		if !isException {
			if !seen[line] {
				seen[line] = true
				parts = append(parts, line)
			}
			chain = -1
			continue
		}
		if msg == "" {
			classOnly = append(classOnly, line)
			continue
		}
		msg = plainUnpack(msg)
		if seen[msg] {
			continue
		}
		seen[msg] = true
		if chain < 0 {
			parts = append(parts, msg)
			chain = len(parts) - 1
		} else {
			parts[chain] += ": " + msg
		}
	}
	if len(parts) == 0 && len(classOnly) > 0 {
		parts = classOnly[:1]
	}
	parts = launchFailure(parts)
	out := strings.Join(parts, " | ")
	if len(out) > maxContainerDiagnostics {
		out = strings.ToValidUTF8(out[:maxContainerDiagnostics], "") + "…"
	}
	return out
}

var (
	// diagException is a Java exception line, "Caused by: " or not, with
	// or without a message; Hadoop's SerializedException also prints
	// "Caused by: <message>" alone.
	diagException = regexp.MustCompile(`^(?:Caused by: )?(?:[a-z][\w$]*\.)+[\w$]*(?:Exception|Error|Throwable)(?:: (.*))?$`)
	// diagLocalPath is a path in a NodeManager's local directories: only
	// the file's name says something to a user.
	diagLocalPath = regexp.MustCompile(`/\S*/(?:filecache|appcache)/[^'"\s]*/([^/'"\s]+)`)
	// diagUnpack is Hadoop's FileUtil failing to unpack a .tar.gz.
	diagUnpack = regexp.MustCompile(`^Error executing command\. gzip -dc \| \(cd '([^']*)' && tar -x ?\) Process exited with exit code (\d+)\.?$`)
)

// exceptionMessage returns the message of an exception line, and whether
// the line is one.
func exceptionMessage(line string) (string, bool) {
	if m := diagException.FindStringSubmatch(line); m != nil {
		return m[1], true
	}
	if rest, ok := strings.CutPrefix(line, "Caused by: "); ok {
		return rest, true
	}
	return "", false
}

// diagPublicDownload is the NodeManager's public localizer failing a
// resource (a PUBLIC LocalResource, the shared cache's files): the
// resource's record, then the exception, on one line, without its cause.
var diagPublicDownload = regexp.MustCompile(`^Failed to download resource \{ \{ (\S+?), -?\d+, (\w+), [^}]*\}.*?\}\s*(?:[a-z][\w$]*\.)+[\w$]*(?:Exception|Error): (.+)$`)

// plainPublicDownload says which file the public localizer failed on.
func plainPublicDownload(line string) string {
	if m := diagPublicDownload.FindStringSubmatch(line); m != nil {
		return fmt.Sprintf("%s: %s (%s) could not be localized by the NodeManager", m[3], path.Base(m[1]), m[2])
	}
	return line
}

// plainUnpack says what a failed unpacking means.
func plainUnpack(msg string) string {
	if m := diagUnpack.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s could not be unpacked (gzip -dc | tar -x exited with code %s: not a gzip-compressed tar archive?)", m[1], m[2])
	}
	return msg
}

// launchFailure reduces the report of the NodeManager's LinuxContainerExecutor on a container whose
// launch failed ("Exception from container-launch.", the container's id, the exit code, "Exception
// message: Launch container failed", then the helper's "Shell error output:" and "Shell output:")
// to the helper's own words: the id and the exit code are in the task's line already, and the
// helper often writes its reason to both of its outputs. Other reports pass unchanged.
func launchFailure(parts []string) []string {
	if len(parts) == 0 || parts[0] != "Exception from container-launch." {
		return parts
	}
	var message, errOut, out string
	var rest []string
	for _, p := range parts[1:] {
		switch {
		case strings.HasPrefix(p, "Container id: "), strings.HasPrefix(p, "Exit code: "):
		case strings.HasPrefix(p, "Exception message: "):
			message = strings.TrimPrefix(p, "Exception message: ")
		case strings.HasPrefix(p, "Shell error output: "):
			errOut = strings.TrimPrefix(p, "Shell error output: ")
		case strings.HasPrefix(p, "Shell output: "):
			out = strings.TrimPrefix(p, "Shell output: ")
		default:
			rest = append(rest, p)
		}
	}
	var reason []string
	switch {
	case errOut != "":
		reason = append(reason, errOut)
	case out != "":
		reason = append(reason, out)
	case message != "" && message != "Launch container failed":
		reason = append(reason, message)
	}
	return append(reason, rest...)
}
