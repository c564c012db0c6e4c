//go:build e2e

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// `run --colocate` and `run --apart` on the faults cluster (three
// unlabelled NodeManagers and one labelled gpu): the constrained type's
// tasks go to the RM as SchedulingRequests with a NODE-scope `in` or
// `notin` constraint on the other type's allocation tag, whose tasks carry
// it; bad pairs are refused before anything is created.
//
//	go test -tags e2e -count=1 -run '^TestE2EAffinity$' ./cmd/tfyarn
func TestE2EAffinity(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.RequireFaults(t)
	t.Run("colocate", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarn(t, c, bin, nil,
			"run", "--worker", "2x1c,256m", "--ps", "1c,256m", "--colocate", "ps=worker", "--output", "json", "--", "sh", "-c", "exit 0")
		require.Equal(t, exitOK, code, stderr)
		r := runJSON(t, stdout)
		requireSchedulingRequest(t, c, r.AppID, "placementConstraint=[in,node,tfyarn-worker]")
		nodes, info := taskNodes(t, c, r.AppID)
		require.Contains(t, []string{nodes["worker:0"], nodes["worker:1"]}, nodes["ps:0"], "ps:0 beside a worker: %v", nodes)
		require.Equal(t, "each ps task on a node running a worker task (--colocate ps=worker)", info, "status shows the constraint")
	})
	t.Run("apart", func(t *testing.T) {
		t.Parallel()
		// Two spread workers take two of the three unlabelled nodes; the
		// ps may only go to the third.
		stdout, stderr, code := execTfyarn(t, c, bin, nil,
			"run", "--spread", "worker", "--worker", "2x1c,128m", "--ps", "1c,128m", "--apart", "ps=worker", "--output", "json", "--", "sh", "-c", "exit 0")
		require.Equal(t, exitOK, code, stderr)
		r := runJSON(t, stdout)
		// Two requests under notin tfyarn-worker: the workers' spread and
		// the ps's --apart.
		requireSchedulingRequest(t, c, r.AppID, "placementConstraint=[notin,node,tfyarn-worker]")
		rmLog, err := os.ReadFile(filepath.Join(c.Dir, "logs", "cluster.log"))
		require.NoError(t, err)
		attempt := "appattempt_" + strings.TrimPrefix(r.AppID, "application_") + "_000001"
		require.Equal(t, 2, strings.Count(string(rmLog), "Successfully added SchedulingRequest to app="+attempt+" placementConstraint=[notin,node,tfyarn-worker]"))
		nodes, info := taskNodes(t, c, r.AppID)
		require.NotEqual(t, nodes["worker:0"], nodes["worker:1"], "spread workers: %v", nodes)
		require.NotContains(t, []string{nodes["worker:0"], nodes["worker:1"]}, nodes["ps:0"], "ps:0 apart from the workers: %v", nodes)
		require.Equal(t, "no ps task on a node running a worker task (--apart ps=worker)", info)
	})
	t.Run("restart keeps the constraint", func(t *testing.T) {
		t.Parallel()
		// worker:1 fails once: a worker that carries the ps's tag is not
		// replaced alone, so the cluster restarts and the same requests
		// place the ps beside a worker again: a worker of the new run, as
		// the restart asks only once the RM has reported the first run's
		// containers complete (their tfyarn-worker tags gone; before that,
		// a loaded NodeManager's late report let the ps land beside an
		// old worker that was ending).
		stdout, stderr, code := execTfyarn(t, c, bin, nil,
			"run", "--colocate", "ps=worker", "--max-restarts", "1", "--worker", "2x1c,128m", "--ps", "1c,128m", "--output", "json", "--",
			"sh", "-c", `if [ "${TFYARN_RESTART:-0}" = 0 ] && [ "$TFYARN_TASK_TYPE" = worker ] && [ "$TFYARN_TASK_INDEX" = 1 ]; then exit 3; fi; sleep 1`)
		require.Equal(t, exitOK, code, stderr)
		r := runJSON(t, stdout)
		require.Contains(t, r.Diagnostics, "restart 1 after worker:1")
		requireSchedulingRequest(t, c, r.AppID, "placementConstraint=[in,node,tfyarn-worker]")
		nodes, _ := taskNodes(t, c, r.AppID)
		require.Contains(t, []string{nodes["worker:0"], nodes["worker:1"]}, nodes["ps:0"], "restarted ps:0 beside a worker: %v", nodes)
	})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"self", []string{"--worker", "2x1c,128m", "--colocate", "worker=worker"},
			"tfyarn: --colocate worker=worker: a type cannot be placed next to itself; drop the pair (--spread worker keeps them apart)\n"},
		{"self apart", []string{"--worker", "2x1c,128m", "--apart", "worker=worker"},
			"tfyarn: --apart worker=worker: to keep worker tasks on nodes of their own, use --spread worker\n"},
		{"not in the job", []string{"--worker", "1x1c,128m", "--colocate", "worker=ps"},
			"tfyarn: --colocate worker=ps: the job has no ps task; add --ps or drop the pair\n"},
		{"unknown type", []string{"--worker", "1x1c,128m", "--apart", "worker=gpu"},
			"tfyarn: --apart \"worker=gpu\": unknown task type \"gpu\"; expected one of chief, worker, ps, evaluator, tensorboard\n"},
		{"contradiction", []string{"--worker", "1x1c,128m", "--ps", "1c,128m", "--colocate", "ps=worker", "--apart", "ps=worker"},
			"tfyarn: --colocate ps=worker and --apart ps=worker contradict each other; keep one\n"},
		{"never", []string{"--worker", "1x1c,128m", "--ps", "1c,128m", "--node-label", "ps=gpu", "--colocate", "ps=worker"},
			"tfyarn: the job can never run: placement constraint each ps task on a node running a worker task (--colocate ps=worker), but ps tasks run on nodes labelled gpu and worker tasks on nodes without a label, and a node has one label; give both the same --node-label, or drop --colocate ps=worker\n"},
		{"apart, no node left", []string{"--spread", "worker", "--worker", "3x1c,128m", "--ps", "1c,128m", "--apart", "ps=worker"},
			"tfyarn: the job can never run: placement constraint no ps task on a node running a worker task (--apart ps=worker), but the 3 spread worker tasks take every one of the 3 running nodes without a label; ask for fewer worker tasks, or drop --apart ps=worker\n"},
	} {
		t.Run("refused "+tc.name, func(t *testing.T) {
			t.Parallel()
			user := c.User(t, "tfyarn-e2e-affinity-"+randomHex(t))
			args := append(append([]string{"run"}, tc.args...), "--", "true")
			stdout, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + user}, args...)
			require.Equal(t, exitUsage, code, stderr)
			require.Empty(t, stdout)
			require.Equal(t, tc.want, stderr)
			requireNothingCreatedFor(t, c, user)
		})
	}
}

// taskNodes maps each task of appID to the NodeManager it ran on, and
// returns the job's affinity as status JSON shows it (the AM's history).
func taskNodes(t *testing.T, c *clustertest.Cluster, appID string) (map[string]string, string) {
	t.Helper()
	out, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", appID, "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var v struct {
		History struct {
			Job struct {
				Affinity string `json:"affinity"`
			} `json:"job"`
			Tasks []struct {
				Task string `json:"task"`
				Node string `json:"node"`
			} `json:"tasks"`
		} `json:"history"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	nodes := map[string]string{}
	for _, task := range v.History.Tasks {
		require.NotEmpty(t, task.Node, "%s has no node", task.Task)
		nodes[task.Task] = task.Node
	}
	return nodes, v.History.Job.Affinity
}
