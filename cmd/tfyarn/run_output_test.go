package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/jobreport"
	"github.com/tfyarn/tfyarn/taskspec"
)

func TestDeciderIsChiefElseWorker0(t *testing.T) {
	require.Equal(t, "chief:0", decider(taskspec.Job{Tasks: []taskspec.TaskGroup{{Type: taskspec.Worker, Instances: 2}, {Type: taskspec.Chief, Instances: 1}}}))
	require.Equal(t, "worker:0", decider(taskspec.Job{Tasks: []taskspec.TaskGroup{{Type: taskspec.Worker, Instances: 2}, {Type: taskspec.PS, Instances: 1}}}))
}

// --logs none follows nothing: no NodeManager is asked, whatever happens.
func TestRunLogsNoneFollowsNothing(t *testing.T) {
	e := &env{}
	r := newRunLogsFor(context.Background(), nil, "worker:0", logsNone, outputTable, e)
	require.Nil(t, r.logs)
	r.event(context.Background(), client.Event{Task: &jobreport.Task{Task: "worker:0", ContainerID: "c", Node: "n:1"}, TaskChange: jobreport.TaskLaunched})
	r.close()
}

// Bad --logs, --task, --tail and --file values fail before any cluster
// is contacted: one line, exit 2.
func TestLogsFlagsRejected(t *testing.T) {
	for want, args := range map[string][]string{
		`--logs "some"`:   {"run", "--worker", "1c", "--logs", "some", "--", "true"},
		`--task "boss:1"`: {"logs", "application_1_0001", "--task", "boss:1"},
		`--tail -3`:       {"logs", "application_1_0001", "--tail", "-3"},
		`--file "../x"`:   {"logs", "application_1_0001", "--file", "../x"},
		"exactly one":     {"logs"},
		"app_1":           {"logs", "app_1"},
	} {
		stdout, stderr, code := runCLI(t, append([]string{"--conf-dir", t.TempDir()}, args...)...)
		require.Equal(t, exitUsage, code, "%v: %s", args, stderr)
		require.Empty(t, stdout, "%v", args)
		require.Regexp(t, `^tfyarn: [^\n]+\n$`, stderr, "%v", args)
		require.Contains(t, stderr, want)
	}
}
