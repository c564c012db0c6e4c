//go:build e2e

package main

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// TestE2EPriority: `run --priority N` reaches the ResourceManager, whose
// report (status, table and JSON) has it; one above the cluster's
// yarn.cluster.max-application-priority is lowered to that maximum; a bad
// one is refused with one line, exit 2, nothing created.
//
//	go test -tags e2e -run '^TestE2EPriority$' ./cmd/tfyarn/
func TestE2EPriority(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	maxText, ok := c.Facts["max-application-priority"]
	require.True(t, ok, "the test cluster in %s predates its yarn.cluster.max-application-priority (testcluster/TestCluster.java): restart it (make cluster-down cluster-up)", c.Dir)
	maxPrio, err := strconv.Atoi(maxText)
	require.NoError(t, err)
	require.Greater(t, maxPrio, 7, "the test asks priority 7 below the cluster's maximum")

	for _, tc := range []struct {
		name      string
		asked, is int
	}{
		{"applied", 7, 7},
		{"above the cluster's maximum", maxPrio + 40, maxPrio},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--worker", "1c,256m", "--name", "e2e-priority",
				"--priority", strconv.Itoa(tc.asked), "--output", "json", "--", "sh", "-c", "exit 0")
			require.Equal(t, exitOK, code, stderr)
			r := runJSON(t, stdout)
			v := statusJSON(t, c, r.AppID)
			require.EqualValues(t, tc.is, v.Priority, "the RM's report of %s", r.AppID)
			out, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", r.AppID)
			require.Equal(t, exitOK, code, errOut)
			require.Regexp(t, regexp.MustCompile(`(?m)^Priority\s+: `+strconv.Itoa(tc.is)+`$`), out)

			// list shows it too, in JSON and in its table.
			out, errOut, code = runCLI(t, "--conf-dir", c.ConfDir, "list", "--state", "FINISHED", "--output", "json")
			require.Equal(t, exitOK, code, errOut)
			var listed struct{ Applications []appView }
			require.NoError(t, json.Unmarshal([]byte(out), &listed))
			found := false
			for _, a := range listed.Applications {
				if a.ID == r.AppID {
					found = true
					require.EqualValues(t, tc.is, a.Priority, "list's JSON")
				}
			}
			require.True(t, found, "list shows %s", r.AppID)
			out, errOut, code = runCLI(t, "--conf-dir", c.ConfDir, "list", "--state", "FINISHED")
			require.Equal(t, exitOK, code, errOut)
			require.Regexp(t, regexp.MustCompile(`(?m)^`+r.AppID+`\s+e2e-priority\s+\S+\s+\S+\s+\S+\s+`+strconv.Itoa(tc.is)+`\s+FINISHED\s`), out, "list's table")
		})
	}
	t.Run("rejects", func(t *testing.T) {
		t.Parallel()
		user := c.User(t, "tfyarn-e2e-"+randomHex(t))
		for _, bad := range []string{"high", "-3"} {
			stdout, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + user}, "run", "--worker", "1c,256m", "--priority", bad, "--", "true")
			require.Equal(t, exitUsage, code, stderr)
			require.Empty(t, stdout)
			require.Equal(t, `tfyarn: --priority "`+bad+`": give a whole number from 0 to 2147483647, e.g. --priority 5`+"\n", stderr)
			require.Equal(t, 1, strings.Count(stderr, "\n"))
		}
		requireNothingCreatedFor(t, c, user)
	})
}
