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
		rmLog, err := os.ReadFile(filepath.Join(c.Dir, "logs", "cluster.log"))
		require.NoError(t, err)
		attempt := "appattempt_" + strings.TrimPrefix(r.AppID, "application_") + "_000001"
		require.Contains(t, string(rmLog), "Successfully added SchedulingRequest to app="+attempt+" placementConstraint=[notin,node,tfyarn-worker]")

		// And the three workers ran on three NodeManagers (status JSON, from
		// the AM's history record).
		out, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", r.AppID, "--output", "json")
		require.Equal(t, exitOK, code, errOut)
		var v struct {
			History struct {
				Job struct {
					Spread string `json:"spread"`
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
			require.NotContains(t, nodes, task.Node, "%s and %s share node %s", nodes[task.Node], task.Task, task.Node)
			nodes[task.Node] = task.Task
		}
		require.Len(t, nodes, 3, "workers by node: %v", nodes)
		require.Equal(t, "no two worker tasks on one node (--spread worker)", v.History.Job.Spread, "status shows the constraint")
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		user := "tfyarn-e2e-spread-" + randomHex(t)
		stdout, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + user},
			"run", "--spread", "worker", "--worker", "4x1c,128m", "--", "true")
		require.Equal(t, exitUsage, code, stderr)
		require.Empty(t, stdout)
		require.Equal(t, "tfyarn: the job can never run: placement constraint no two worker tasks on one node (--spread worker) needs a node each for its 4 worker tasks on nodes without a label, but there are 3 running; ask for at most 3, or drop --spread\n", stderr)
		requireNothingCreatedFor(t, c, user)
	})
}
