package clustertest

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClaimsToolchainPinned: docs/development.md "go.mod pins the toolchain: `toolchain go1.26.11`
// ... The Makefile and `.ci/run` set `GOTOOLCHAIN=auto` ... the Go vulnerability database of
// 2026-11-05". The pin is at least go1.26.10 (the standard library's advisories GO-2026-6599 ...
// GO-2026-6809 are fixed there), the docs name the pin and the database's date that
// scripts/analyze.sh really uses, and govulncheck runs in it.
func TestClaimsToolchainPinned(t *testing.T) {
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(RepoRoot(), p))
		require.NoError(t, err)
		return string(b)
	}
	gomod, doc, analyze := read("go.mod"), read("docs/development.md"), read("scripts/analyze.sh")
	m := regexp.MustCompile(`(?m)^toolchain go1\.26\.([0-9]+)$`).FindStringSubmatch(gomod)
	require.NotNil(t, m, "go.mod names no toolchain go1.26.N")
	patch, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.GreaterOrEqual(t, patch, 10, "go.mod's toolchain go1.26.%s predates go1.26.10, which fixes the standard library's advisories", m[1])
	require.Contains(t, doc, "`toolchain go1.26."+m[1]+"`", "docs/development.md names another toolchain than go.mod")
	require.Regexp(t, `(?m)^export GOTOOLCHAIN := auto$`, read("Makefile"))
	require.Regexp(t, `(?m)^export GOTOOLCHAIN=auto$`, read(".ci/run"))

	v := regexp.MustCompile(`(?m)^VULNDB_VERSION=v0\.0\.0-(\d{4})(\d{2})(\d{2})\d{6}-[0-9a-f]{12}$`).FindStringSubmatch(analyze)
	require.NotNil(t, v, "scripts/analyze.sh pins no VULNDB_VERSION pseudo-version")
	date := v[1] + "-" + v[2] + "-" + v[3]
	require.Contains(t, doc, "vulnerability database of "+date, "docs/development.md gives another date than the database scripts/analyze.sh uses")
	require.True(t, strings.Contains(analyze, `"$tools/govulncheck" -db "file://$vulndb" ./... || rc=1`), "scripts/analyze.sh does not fail on govulncheck's findings")
}
