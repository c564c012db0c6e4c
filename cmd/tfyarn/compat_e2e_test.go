//go:build e2e

package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// compatLaneHadoop is the release of make test's compatibility lane (the one most clusters run:
// EMR 6.x-7.2, Dataproc 2.1-2.2); make test-compat runs every release (compat_suite_e2e_test.go).
const compatLaneHadoop = "3.3.6"

// make test's compatibility lane: one short job on Hadoop 3.3.6's own cluster that goes through
// most of what the suite checks on every release (docs/hadoop-versions.md).
//
//	go test -tags e2e -run 'E2ECompat$' ./cmd/tfyarn/
func TestE2ECompat(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.RequireHadoop(t, compatLaneHadoop)
	require.Equal(t, compatLaneHadoop, c.Facts["hadoop.version"], "the cluster's jars say their release")
	compatCombined(t, c, bin)
}

// compatCombined is one job with a placement constraint (--spread worker) and --max-restarts 1:
// while it runs, status says RUNNING, list lists it and logs reads a task's live output from
// its NodeManager; worker:1's program is killed (kill -9), the cluster restarts once and the job
// succeeds; its workers ran on two nodes; the aggregated logs hold both runs' output.
func compatCombined(t *testing.T, c *clustertest.Cluster, bin string) {
	j := startFaultJob(t, c, bin, "--spread", "worker", "--max-restarts", "1", "--worker", "2x1c,256m", "--success", "all",
		"--", "sh", "-c", `echo compat $TFYARN_TASK run $TFYARN_RESTART; `+onceForever)
	j.waitRegistered(t, "worker:0")
	j.waitRegistered(t, "worker:1")

	require.Equal(t, "RUNNING", statusJSON(t, c, j.appID).State, "status")
	out, errOut, code := execTfyarn(t, c, bin, nil, "list")
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, j.appID, "list")
	require.Eventually(t, func() bool {
		out, _, code = execTfyarn(t, c, bin, nil, "logs", j.appID, "--task", "worker:0", "--file", "stdout")
		return code == exitOK && strings.Contains(out, "compat worker:0 run 0")
	}, 30*time.Second, time.Second, "live logs of worker:0: %s", out)

	fault := killTask("worker:1")(t, c, j)
	restartsAfter(regexp.MustCompile(`restart 1 after worker:1 \(container \S+ on \S+\) failed: exit code 137 \(SIGKILL\)`))(t, c, j, fault)

	nodes := spreadNodes(t, c, j.appID)
	require.Len(t, nodes, 2, "--spread worker: each worker on a node of its own (%v)", nodes)
	logs := aggregatedLogs(t, c, bin, j.appID)
	for _, line := range []string{"compat worker:0 run 0", "compat worker:1 run 0", "compat worker:1 run 1"} {
		require.Contains(t, logs, line, "aggregated logs")
	}
}
