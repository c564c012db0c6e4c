package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// TestClaimsHadoopVersions: docs/hadoop-versions.md's matrix has a column for every release of
// the suite (the default and clustertest.HadoopVersions, the oldest marked), every TestCompat
// cell names a case of compat_suite_e2e_test.go in its own column, every case is in every
// column, and every other test it names exists; its port table is clustertest's.
func TestClaimsHadoopVersions(t *testing.T) {
	matrix := clustertest.DocSection(t, "## The matrix")
	var rows [][]string
	for _, line := range strings.Split(matrix, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| ---") {
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			rows = append(rows, cells)
		}
	}
	require.Greater(t, len(rows), 1, "the matrix")
	header := rows[0][1:]
	var columns []string
	for _, h := range header {
		v, _, _ := strings.Cut(h, " ")
		columns = append(columns, v)
		require.Equal(t, v == clustertest.OldestHadoop, strings.Contains(h, "(oldest)"), "column %q", h)
		require.Equal(t, v == clustertest.DefaultHadoop, strings.Contains(h, "(default)"), "column %q", h)
	}
	want := []string{clustertest.DefaultHadoop}
	for _, v := range clustertest.HadoopVersions {
		want = append(want, v.Version)
	}
	require.ElementsMatch(t, want, columns, "a column per release of the suite")

	suite, err := os.ReadFile("compat_suite_e2e_test.go")
	require.NoError(t, err)
	var cases []string
	for _, m := range regexp.MustCompile(`t\.Run\("([a-z-]+)"`).FindAllStringSubmatch(string(suite), -1) {
		cases = append(cases, m[1])
	}
	require.NotEmpty(t, cases)
	tests := testFuncs(t)
	inMatrix := map[string]int{}
	for _, row := range rows[1:] {
		for i, cell := range row[1:] {
			for _, m := range regexp.MustCompile("`(Test[A-Za-z0-9]+)(?:/([0-9.]+)/([a-z-]+))?`").FindAllStringSubmatch(cell, -1) {
				if m[1] == "TestCompat" {
					require.Equal(t, columns[i], m[2], "%s in column %s", m[0], columns[i])
					require.Contains(t, cases, m[3], "%s: no such case", m[0])
					inMatrix[m[3]]++
					continue
				}
				require.True(t, tests[m[1]], "%s: no such test", m[1])
			}
		}
	}
	for _, c := range cases {
		want := len(columns)
		if c == "kerberos" {
			want-- // the default release's is TestE2EKerberos
		}
		require.Equal(t, want, inMatrix[c], "case %s in every column", c)
	}

	ports := clustertest.DocSection(t, "## A cluster per release")
	for _, v := range clustertest.HadoopVersions {
		row := "| " + v.Version + " | " + strconv.Itoa(v.Shift) + " | `localhost:" + strconv.Itoa(8032+v.Shift) + "` |"
		require.Contains(t, ports, row)
	}
	page, err := os.ReadFile(filepath.Join(clustertest.RepoRoot(), "docs", "hadoop-versions.md"))
	require.NoError(t, err)
	for _, m := range regexp.MustCompile("`(Test[A-Za-z0-9]+)[`/]").FindAllStringSubmatch(string(page), -1) {
		require.True(t, m[1] == "TestCompat" || tests[m[1]], "docs/hadoop-versions.md names %s: no such test", m[1])
	}
	script, err := os.ReadFile(filepath.Join(clustertest.RepoRoot(), "scripts", "test.sh"))
	require.NoError(t, err)
	require.Contains(t, string(script), `"$PWD"/.testcluster-hadoop-*/`, "make test stops every release's cluster")
}

// testFuncs is every top-level Test function of the module's test files.
func testFuncs(t *testing.T) map[string]bool {
	found := map[string]bool{}
	re := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	err := filepath.WalkDir(clustertest.RepoRoot(), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != clustertest.RepoRoot() {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				found[m[1]] = true
			}
		}
		return nil
	})
	require.NoError(t, err)
	names := make([]string, 0, len(found))
	for n := range found {
		names = append(names, n)
	}
	sort.Strings(names)
	require.NotEmpty(t, names)
	return found
}
