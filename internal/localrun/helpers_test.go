package localrun

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/syncbuf"
	"github.com/tfyarn/tfyarn/taskspec"
)

// group is n tasks of type typ with nominal resources (unused locally).
func group(typ taskspec.TaskType, n int) taskspec.TaskGroup {
	return taskspec.TaskGroup{Type: typ, Instances: n, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 256}}
}

// shJob runs script under sh -c in every task; scripts branch on
// $TFYARN_TASK.
func shJob(script string, groups ...taskspec.TaskGroup) taskspec.Job {
	return taskspec.Job{Name: "test", Tasks: groups, Command: "sh", Args: []string{"-c", script}}
}

// runLocal runs job with captured output and test-sized timeouts.
func runLocal(t *testing.T, ctx context.Context, job taskspec.Job, opts Options) (*Result, *syncbuf.Buffer) {
	t.Helper()
	out := &syncbuf.Buffer{}
	opts.Stdout, opts.Stderr = out, out
	if opts.ProgramStopGrace == 0 {
		opts.ProgramStopGrace = 2 * time.Second
	}
	if opts.RegistrationTimeout == 0 {
		opts.RegistrationTimeout = 20 * time.Second
	}
	res, err := Run(ctx, job, opts)
	require.NoError(t, err)
	t.Logf("%s: %s\n%s", res.Status, res.Diagnostics, out.String())
	return res, out
}

// tfConfigOf finds the TF_CONFIG a task's program printed as "TF_CONFIG=<json>"
// (a line the examples and the sh tests both print): the last one, its
// latest run's after a restart.
func tfConfigOf(t *testing.T, out string, task taskspec.TaskID) tfConfig {
	t.Helper()
	prefix := "[" + task.String() + "] TF_CONFIG="
	lines := strings.Split(out, "\n")
	slices.Reverse(lines)
	for _, line := range lines {
		if js, ok := strings.CutPrefix(line, prefix); ok {
			var c tfConfig
			require.NoError(t, json.Unmarshal([]byte(js), &c), "TF_CONFIG of %s: %s", task, js)
			return c
		}
	}
	require.Failf(t, "no TF_CONFIG", "%s printed no %q line", task, prefix)
	return tfConfig{}
}

type tfConfig struct {
	Cluster map[string][]string `json:"cluster"`
	Task    struct {
		Type  string `json:"type"`
		Index int    `json:"index"`
	} `json:"task"`
}

// requireFullTFConfig checks that every task saw the whole cluster, with
// the addresses the tasks registered, and itself as its task.
func requireFullTFConfig(t *testing.T, res *Result, out string) {
	t.Helper()
	want := map[string][]string{}
	for _, tr := range res.Tasks {
		if tr.Task.Type.InCluster() {
			require.NotEmpty(t, tr.Addr, "%s registered no address", tr.Task)
			want[string(tr.Task.Type)] = append(want[string(tr.Task.Type)], tr.Addr)
		}
	}
	for _, tr := range res.Tasks {
		c := tfConfigOf(t, out, tr.Task)
		require.Equal(t, want, c.Cluster, "cluster of %s", tr.Task)
		require.Equal(t, string(tr.Task.Type), c.Task.Type)
		require.Equal(t, tr.Task.Index, c.Task.Index)
	}
}

func taskResult(t *testing.T, res *Result, id taskspec.TaskID) TaskResult {
	t.Helper()
	tr, ok := res.Task(id)
	require.True(t, ok, "no result for %s", id)
	return tr
}

func id(t taskspec.TaskType, i int) taskspec.TaskID { return taskspec.TaskID{Type: t, Index: i} }
