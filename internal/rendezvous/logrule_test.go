package rendezvous

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// An exit report carries the log rule a stderr line matched, and the line;
// an unknown rule or an overlong line is refused.
func TestExitReportLogRule(t *testing.T) {
	e := ExitReport{Task: taskspec.TaskID{Type: taskspec.Worker}, ContainerID: "container_1_0001_01_000002", ExitCode: 143, LogRule: LogRuleExcludeNode, LogLine: "Xid 79"}
	got, err := DecodeExitReport(encodeExit(e))
	require.NoError(t, err)
	require.Equal(t, e, got)
	for _, bad := range []ExitReport{{Task: e.Task, LogRule: "rm -rf"}, {Task: e.Task, LogRule: LogRuleFail, LogLine: strings.Repeat("x", MaxStderrLineLen+1)}} {
		_, err := DecodeExitReport(encodeExit(bad))
		require.ErrorContains(t, err, "malformed log rule")
	}
}

// An exit report carries the program's no-restart reason; one over a stderr line's length or with
// a control character (a second line) is refused.
func TestExitReportNoRestart(t *testing.T) {
	e := ExitReport{Task: taskspec.TaskID{Type: taskspec.Worker}, ContainerID: "container_1_0001_01_000002", ExitCode: 2, NoRestart: "shard 7 is corrupt: fix the input"}
	got, err := DecodeExitReport(encodeExit(e))
	require.NoError(t, err)
	require.Equal(t, e, got)
	for _, reason := range []string{strings.Repeat("x", MaxStderrLineLen+1), "one\ntwo", "bell\a"} {
		_, err := DecodeExitReport(encodeExit(ExitReport{Task: e.Task, ExitCode: 2, NoRestart: reason}))
		require.ErrorContains(t, err, "malformed no-restart reason", "%q", reason)
	}
}
