package clustertest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClaimsSecurityModelNamesRealTests: README's "Security model" says every row names the tests
// that would fail if it were false, and that this test checks each named test exists. A row
// without a test, or a test renamed or deleted, fails here.
func TestClaimsSecurityModelNamesRealTests(t *testing.T) {
	section := DocSection(t, "# Security model")

	testName := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`")
	named := map[string]bool{}
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| what |") {
			continue
		}
		rows++
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		require.Len(t, cells, 4, "a row of what, can, cannot, tests: %q", line)
		found := testName.FindAllStringSubmatch(cells[3], -1)
		require.NotEmpty(t, found, "the row names its tests: %q", line)
		for _, m := range found {
			named[m[1]] = true
		}
	}
	require.GreaterOrEqual(t, rows, 8, "rows of the Security model table")
	for _, m := range testName.FindAllStringSubmatch(section, -1) {
		named[m[1]] = true
	}

	defined := map[string]bool{}
	def := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]+)\(`)
	treeGoFiles(t, func(rel string, src []byte) {
		if strings.HasSuffix(rel, "_test.go") {
			for _, m := range def.FindAllSubmatch(src, -1) {
				defined[string(m[1])] = true
			}
		}
	})
	for name := range named {
		require.True(t, defined[name], "README's Security model names %s, which no test file defines", name)
	}
}
