package clustertest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// docs reads README.md and every page of docs/, in that order, for the claims tests.
func docs(t testing.TB) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(RepoRoot(), "docs", "*.md"))
	if err != nil {
		t.Fatalf("clustertest: listing docs/: %v", err)
	}
	sort.Strings(paths)
	out := map[string]string{}
	for _, p := range append([]string{filepath.Join(RepoRoot(), "README.md")}, paths...) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("clustertest: reading %s: %v", p, err)
		}
		out[p] = string(data)
	}
	return out
}

// DocsText is README.md and every page of docs/ as one text, for claims tests that look for a
// sentence wherever it is.
func DocsText(t testing.TB) string {
	t.Helper()
	all := docs(t)
	paths := make([]string, 0, len(all))
	for p := range all {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(all[p])
		b.WriteString("\n")
	}
	return b.String()
}

// DocSection returns the section under heading (a whole heading line such as "## Preemption
// warning") in README.md or the page of docs/ that has it, up to the next heading of the same
// or a higher level, for the claims tests that pin its sentences to the code. A heading that is
// in none of them, or in more than one, fails the test.
func DocSection(t testing.TB, heading string) string {
	t.Helper()
	var found []string
	var section string
	for path, text := range docs(t) {
		_, after, ok := strings.Cut("\n"+text, "\n"+heading+"\n")
		if !ok {
			continue
		}
		found = append(found, path)
		level := strings.Repeat("#", strings.IndexByte(heading, ' '))
		end := len(after)
		for l := len(level); l >= 1; l-- {
			if i := strings.Index(after, "\n"+level[:l]+" "); i >= 0 && i < end {
				end = i
			}
		}
		section = heading + "\n" + after[:end]
	}
	switch len(found) {
	case 0:
		t.Fatalf("clustertest: no heading %q in README.md or docs/", heading)
	case 1:
	default:
		sort.Strings(found)
		t.Fatalf("clustertest: heading %q is in %s: make it one", heading, strings.Join(found, " and "))
	}
	return section
}
