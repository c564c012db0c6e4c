package clustertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// READMESection returns the README's section under heading (a whole heading line such as
// "### Preemption warning"), up to the next heading of the same or a higher level, for the claims
// tests that pin its sentences to the code. A heading that is not there fails the test.
func READMESection(t testing.TB, heading string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "README.md"))
	if err != nil {
		t.Fatalf("clustertest: reading README.md: %v", err)
	}
	_, after, ok := strings.Cut("\n"+string(data), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("clustertest: README.md has no heading %q", heading)
	}
	level := strings.Repeat("#", strings.IndexByte(heading, ' '))
	end := len(after)
	for l := len(level); l >= 1; l-- {
		if i := strings.Index(after, "\n"+level[:l]+" "); i >= 0 && i < end {
			end = i
		}
	}
	return heading + "\n" + after[:end]
}
