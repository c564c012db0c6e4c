package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/yarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestClaimsSpreadREADME pins what README's `--spread` section names to
// the code: the allocation tags, the RM setting and the test that proves
// the placement (TestE2ESpread, which also proves the refusal's line and
// the status field; core's TestAllocDeadlineNamesSpread and
// TestSpreadWorkerNotInPlace the deadline and restart sentences;
// TestRefusalDiagnosticsPlacementHandler the disabled handler's).
func TestClaimsSpreadREADME(t *testing.T) {
	readme := clustertest.DocsText(t)
	section := strings.ReplaceAll(clustertest.DocSection(t, "## Spreading tasks over nodes (`--spread`)"), "\n", " ")

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

// TestClaimsAffinityREADME pins the section's --colocate and --apart
// paragraph to the code: the tag, the test that proves the placement
// (TestE2EAffinity, also the refusals and the status field; core's
// TestAllocDeadlineNamesAffinity and TestAffinityWorkerNotInPlace, and
// TestE2EAffinity's restart, the
// deadline and restart sentences; taskspec's TestAffinities the one
// constraint per type), the Go API's field, --local ignoring the flags
// and the comparison row.
func TestClaimsAffinityREADME(t *testing.T) {
	readme := clustertest.DocsText(t)
	section := strings.ReplaceAll(clustertest.DocSection(t, "## Spreading tasks over nodes (`--spread`)"), "\n", " ")

	require.Contains(t, section, "(`"+taskspec.AffinityTag(taskspec.Worker)+"`)")
	require.Contains(t, section, "`in,node,tfyarn-worker`")
	require.Contains(t, section, "`TestE2EAffinity`")
	require.Contains(t, section, "`job.affinity`")
	require.Contains(t, section, "`client.Job`'s `Affinities`")
	var job client.Job // the Go API's field, as the section names it
	job.Affinities = taskspec.Affinities{{Type: taskspec.PS, Other: taskspec.Worker}}
	require.Equal(t, "--colocate ps=worker", job.Affinities[0].Flag())
	src, err := os.ReadFile(filepath.Join(clustertest.RepoRoot(), "cmd", "tfyarn", "affinity_e2e_test.go"))
	require.NoError(t, err)
	require.Contains(t, string(src), "func TestE2EAffinity(")
	require.Contains(t, section, "`--local` ignores both flags")
	require.Subset(t, yarnOnlyFlags, []string{"colocate", "apart"})
	require.Contains(t, readme, "`--colocate A=B` / `--apart A=B`")
}
