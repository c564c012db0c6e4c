package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// A failed task's last stderr lines follow the diagnostics, unless its
// failure line says them already (cut or not).
func TestWithStderrSaysALineOnce(t *testing.T) {
	long := "tfyarn: the function was pickled by Python 3.1 " + strings.Repeat("x", 300)
	tails := map[string][]string{"worker:0": {"Traceback", "ValueError: bad input"}, "worker:1": {long}, "worker:2": {"step 7: loss is NaN"}}
	tasks := []TaskStatus{
		{Task: taskspec.TaskID{Type: taskspec.Worker, Index: 0}, State: TaskFailed, EndOrder: 1, Failure: "worker:0 failed: exit code 1"},
		{Task: taskspec.TaskID{Type: taskspec.Worker, Index: 1}, State: TaskFailed, EndOrder: 2, Failure: "worker:1 failed: exit code 2; it asked not to be restarted: " + long},
		{Task: taskspec.TaskID{Type: taskspec.Worker, Index: 2}, State: TaskFailed, EndOrder: 3, Failure: "worker:2 wrote a line matching --fail-on-log: step 7: loss is NaN"},
	}
	got := WithStderr("job failed", tasks, func(t TaskStatus) []string { return tails[t.Task.String()] })
	require.Equal(t, "job failed; last stderr of worker:0: Traceback | ValueError: bad input", got)
}

func TestStderrSummary(t *testing.T) {
	require.Equal(t, "", StderrSummary(nil))
	require.Equal(t, "b | c | d", StderrSummary([]string{"a", "b", "", "c", " d "}))
	require.Equal(t, strings.Repeat("x", diagStderrLineLen)+"…", StderrSummary([]string{strings.Repeat("x", 500)}))
}
