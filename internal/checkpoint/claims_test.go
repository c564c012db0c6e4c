package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestClaimsCheckpointsPage holds docs/checkpoints.md's numbers and names to the code: the
// variables, files and directory names, the polling intervals, how many are kept, how old a
// save cut short is before it goes, and that every test it names exists.
func TestClaimsCheckpointsPage(t *testing.T) {
	how := clustertest.DocSection(t, "## How a task keeps its checkpoints")
	for _, want := range []string{
		"`" + EnvDir + "`", "`" + EnvRestored + "`", "`" + CompleteMark + "`", "`" + SavedFile + "`",
		"`" + tempPrefix + "<ID>`",
		fmt.Sprintf("every %d ms", pollInterval.Milliseconds()),
		fmt.Sprintf("every %d ms", urgentPollInterval.Milliseconds()),
		fmt.Sprintf("keeps its last %d (`--checkpoint-keep N`, 1 to %d)", DefaultKeep, MaxKeep),
		fmt.Sprintf("more than %d minutes old", int(staleSave/time.Minute)),
		"`/user/<you>/.tfyarn/checkpoints/<--name>`",
		"`" + NewID(time.UnixMilli(1795638667412), "application_1795638545376_0002") + "`",
		"(`worker-1`)",
	} {
		if !strings.Contains(how, want) {
			t.Errorf("docs/checkpoints.md's How a task keeps its checkpoints lacks %q", want)
		}
	}
	if Slot(taskspec.TaskID{Type: taskspec.Worker, Index: 1}) != "worker-1" || MaxKeep != taskspec.MaxCheckpointKeep {
		t.Error("the page's task directory or --checkpoint-keep's range is not the code's")
	}
	measured := clustertest.DocSection(t, "### Measured")
	results, err := os.ReadFile(filepath.Join(clustertest.RepoRoot(), "bench", "results", "checkpoints.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, figure := range regexp.MustCompile(`\b\d+\.\d+ ?m?s\b|\b\d+ms\b`).FindAllString(measured, -1) {
		if !strings.Contains(string(results), "| "+figure+" |") {
			t.Errorf("docs/checkpoints.md's Measured says %q, which bench/results/checkpoints.md does not", figure)
		}
	}
	var sources strings.Builder
	for _, dir := range []string{"internal/checkpoint", "cmd/tfyarn"} {
		files, _ := filepath.Glob(filepath.Join(clustertest.RepoRoot(), dir, "*_test.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sources.Write(b)
		}
	}
	for _, m := range regexp.MustCompile("`(Test[A-Za-z0-9]+)`").FindAllStringSubmatch(clustertest.DocsText(t), -1) {
		if strings.Contains(m[1], "Checkpoint") || strings.Contains(m[1], "SaveCutShort") || m[1] == "TestLinksAreNotFollowed" {
			if !strings.Contains(sources.String(), "func "+m[1]+"(") {
				t.Errorf("the docs name %s, which is no test here", m[1])
			}
		}
	}
}
