package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/taskspec"
	"github.com/tfyarn/tfyarn/yarn"
)

// TestClaimsSpreadREADME pins what README's `--spread` section names to
// the code: the allocation tags, the RM setting and the test that proves
// the placement (TestE2ESpread, which also proves the refusal's line and
// the status field; core's TestAllocDeadlineNamesSpread and
// TestSpreadWorkerNotInPlace the deadline and restart sentences;
// TestRefusalDiagnosticsPlacementHandler the disabled handler's).
func TestClaimsSpreadREADME(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(clustertest.RepoRoot(), "README.md"))
	require.NoError(t, err)
	readme := string(data)
	start := strings.Index(readme, "### Spreading tasks over nodes (`--spread`)\n")
	require.GreaterOrEqual(t, start, 0, "README has no --spread section")
	section := readme[start:]
	section = strings.ReplaceAll(section[:strings.Index(section[4:], "\n### ")+4], "\n", " ")

	worker := taskspec.Job{Spread: "worker"}
	all := taskspec.Job{Spread: taskspec.SpreadAll}
	require.Contains(t, section, "(`"+worker.SpreadTag()+"`; `"+all.SpreadTag()+"` for `all`)")
	require.Contains(t, section, "`"+yarn.PlacementConstraintsHandlerKey+"` set to `scheduler`")
	require.Contains(t, section, "`TestE2ESpread`")
	require.Contains(t, section, "`job.spread`")
	src, err := os.ReadFile(filepath.Join(clustertest.RepoRoot(), "cmd", "tfyarn", "spread_e2e_test.go"))
	require.NoError(t, err)
	require.Contains(t, string(src), "func TestE2ESpread(")
	require.Contains(t, readme, "| placement constraints | `--spread TYPE\\|all`")
}
