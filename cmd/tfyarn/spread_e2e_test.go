//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// `run --spread` on the faults cluster (three unlabelled NodeManagers and
// one labelled gpu): spread tasks go to the RM as SchedulingRequests with a
// NODE anti-affinity constraint and land on distinct nodes; a spread the
// partition's nodes can never hold is refused before anything is created.
//
//	go test -tags e2e -count=1 -run '^TestE2ESpread$' ./cmd/tfyarn
func TestE2ESpread(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.RequireFaults(t)
	t.Run("distinct nodes", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarn(t, c, bin, nil,
			"run", "--spread", "worker", "--worker", "3x1c,128m", "--name", "e2e-spread", "--output", "json", "--", "sh", "-c", "exit 0")
		t.Logf("stdout: %s\nstderr: %s", stdout, stderr)
		require.Equal(t, exitOK, code)
		r := runJSON(t, stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)

		// The RM placed them under the constraint: its scheduler logs each
		// SchedulingRequest it accepts, with the constraint it parsed.
		requireSchedulingRequest(t, c, r.AppID, "placementConstraint=[notin,node,tfyarn-worker]")
		// And the three workers ran on three NodeManagers (status JSON, from
		// the AM's history record), which shows the constraint.
		nodes := spreadNodes(t, c, r.AppID)
		require.Len(t, nodes, 3, "workers by node: %v", nodes)
		out, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", r.AppID, "--output", "json")
		require.Equal(t, exitOK, code, errOut)
		var v struct {
			History struct {
				Job struct {
					Spread string `json:"spread"`
				} `json:"job"`
			} `json:"history"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		require.Equal(t, "no two worker tasks on one node (--spread worker)", v.History.Job.Spread, "status shows the constraint")
	})
	t.Run("all, across groups", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarn(t, c, bin, nil,
			"run", "--spread", "all", "--chief", "1c,128m", "--worker", "2x1c,128m", "--output", "json", "--", "sh", "-c", "exit 0")
		require.Equal(t, exitOK, code, stderr)
		r := runJSON(t, stdout)
		requireSchedulingRequest(t, c, r.AppID, "placementConstraint=[notin,node,tfyarn-cluster]")
		nodes := spreadNodes(t, c, r.AppID)
		require.Len(t, nodes, 3, "chief and workers by node: %v", nodes)
	})
	t.Run("queue default label", func(t *testing.T) {
		t.Parallel()
		// ml-gpu's default label is gpu: the SchedulingRequest names that
		// partition (the RM gives it no default), so the worker runs there.
		stdout, stderr, code := execTfyarn(t, c, bin, nil,
			"run", "--queue", "ml-gpu", "--spread", "worker", "--worker", "1x1c,128m", "--output", "json", "--", "sh", "-c", "exit 0")
		require.Equal(t, exitOK, code, stderr)
		r := runJSON(t, stdout)
		// The RM logs the two parts of the constraint's AND in either order.
		requireSchedulingRequest(t, c, r.AppID,
			"placementConstraint=[notin,node,yarn_node_partition/=[gpu]:notin,node,tfyarn-worker]. nodePartition=gpu",
			"placementConstraint=[notin,node,tfyarn-worker:notin,node,yarn_node_partition/=[gpu]]. nodePartition=gpu")
		gpuNodes := map[string]bool{}
		conf, err := hadoopconf.LoadDir(c.ConfDir)
		require.NoError(t, err)
		rm, err := yarn.NewApplicationClient(conf, yarn.ClientOptions{})
		require.NoError(t, err)
		defer rm.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		reports, err := rm.GetClusterNodes(ctx)
		require.NoError(t, err)
		for _, n := range reports {
			if len(n.GetNodeLabels()) > 0 && n.GetNodeLabels()[0] == "gpu" {
				gpuNodes[yarn.FormatNodeID(n.GetNodeId())] = true
			}
		}
		for node := range spreadNodes(t, c, r.AppID) {
			require.True(t, gpuNodes[node], "worker:0 ran on %s, not a gpu node (%v)", node, gpuNodes)
		}
	})
	t.Run("restart keeps the constraint", func(t *testing.T) {
		t.Parallel()
		// worker:1 fails once: the cluster restarts (a spread worker is not
		// replaced alone) and the same SchedulingRequest, its count raised
		// again, places the new containers on three nodes.
		stdout, stderr, code := execTfyarn(t, c, bin, nil,
			"run", "--spread", "worker", "--max-restarts", "1", "--worker", "3x1c,128m", "--output", "json", "--",
			"sh", "-c", `if [ "${TFYARN_RESTART:-0}" = 0 ] && [ "$TFYARN_TASK_INDEX" = 1 ]; then exit 3; fi; sleep 1`)
		require.Equal(t, exitOK, code, stderr)
		r := runJSON(t, stdout)
		require.Contains(t, r.Diagnostics, "restart 1 after worker:1")
		requireSchedulingRequest(t, c, r.AppID, "placementConstraint=[notin,node,tfyarn-worker]")
		nodes := spreadNodes(t, c, r.AppID)
		require.Len(t, nodes, 3, "restarted workers by node: %v", nodes)
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		user := c.User(t, "tfyarn-e2e-spread-"+randomHex(t))
		stdout, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + user},
			"run", "--spread", "worker", "--worker", "4x1c,128m", "--", "true")
		require.Equal(t, exitUsage, code, stderr)
		require.Empty(t, stdout)
		require.Equal(t, "tfyarn: the job can never run: placement constraint no two worker tasks on one node (--spread worker) needs a node each for its 4 worker tasks on nodes without a label, but there are 3 running; ask for at most 3, or drop --spread\n", stderr)
		requireNothingCreatedFor(t, c, user)
	})
}

// requireSchedulingRequest: the RM's scheduler logged accepting a
// SchedulingRequest of appID's first attempt with want (or one of the
// alternatives, for what the RM prints in no fixed order) in its line.
func requireSchedulingRequest(t *testing.T, c *clustertest.Cluster, appID, want string, alternatives ...string) {
	t.Helper()
	rmLog, err := os.ReadFile(filepath.Join(c.Dir, "logs", "cluster.log"))
	require.NoError(t, err)
	attempt := "appattempt_" + strings.TrimPrefix(appID, "application_") + "_000001"
	prefix := "Successfully added SchedulingRequest to app=" + attempt + " "
	var seen []string
	for _, line := range strings.Split(string(rmLog), "\n") {
		if i := strings.Index(line, prefix); i >= 0 {
			seen = append(seen, line[i+len(prefix):])
		}
	}
	found := false
	for _, w := range append([]string{want}, alternatives...) {
		found = found || strings.Contains(string(rmLog), prefix+w)
	}
	require.True(t, found, "the RM accepted no SchedulingRequest of %s with %q; it logged %q", attempt, append([]string{want}, alternatives...), seen)
}

// spreadNodes maps each NodeManager that ran a task of appID (status JSON,
// from the AM's history) to that task, failing when two share one.
func spreadNodes(t *testing.T, c *clustertest.Cluster, appID string) map[string]string {
	t.Helper()
	out, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", appID, "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var v struct {
		History struct {
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
		require.NotContains(t, nodes, task.Node, "%s and %s share node %s", nodes[task.Node], task.Task, task.Node)
		nodes[task.Node] = task.Task
	}
	return nodes
}
