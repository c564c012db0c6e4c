package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// TestClaimsRunFlagMap: docs/running-jobs.md's table of run's flags names every flag
// `tfyarn run --help` lists, each once, and no other; every page it points to exists.
func TestClaimsRunFlagMap(t *testing.T) {
	section := clustertest.DocSection(t, "## `tfyarn run`'s flags, and where each is described")
	flag := regexp.MustCompile("`--([a-z-]+)`")
	link := regexp.MustCompile(`\]\(([^)#]+)\)`)
	var documented []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) != 3 || strings.HasPrefix(line, "| about |") {
			continue
		}
		for _, m := range flag.FindAllStringSubmatch(cells[1], -1) {
			documented = append(documented, m[1])
		}
		for _, m := range link.FindAllStringSubmatch(cells[2], -1) {
			_, err := os.Stat(filepath.Join(clustertest.RepoRoot(), "docs", m[1]))
			require.NoError(t, err, "the table points to %s", m[1])
		}
	}

	stdout, _, code := runCLI(t, "run", "--help")
	require.Equal(t, exitOK, code)
	_, options, ok := strings.Cut(stdout, "OPTIONS:")
	require.True(t, ok, "run --help has no OPTIONS")
	var listed []string
	for _, m := range regexp.MustCompile(`(?m)^\s+--([a-z-]+)`).FindAllStringSubmatch(options, -1) {
		if m[1] != "help" {
			listed = append(listed, m[1])
		}
	}
	sort.Strings(documented)
	sort.Strings(listed)
	require.NotEmpty(t, listed)
	require.Equal(t, listed, documented, "run's flags vs the table in docs/running-jobs.md")
}
