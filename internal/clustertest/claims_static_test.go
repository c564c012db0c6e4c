package clustertest

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClaimsOneStaticBinary: README "tfyarn runs ... from one static Go
// binary" and "`make build` (→ `bin/tfyarn`, static)". The binary the
// tests ship (built as `make build` builds it) has no dynamic loader and
// needs no shared library, so it runs in any container.
func TestClaimsOneStaticBinary(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(RepoRoot(), "Makefile"))
	require.NoError(t, err)
	require.Contains(t, string(mk), "CGO_ENABLED=0 $(GO) build -trimpath -o bin/tfyarn ./cmd/tfyarn")

	f, err := elf.Open(BuildTfyarn(t))
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		require.NotEqual(t, elf.PT_INTERP, p.Type, "a dynamically linked binary (it names a loader)")
	}
	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	require.Empty(t, libs, "shared libraries needed: %s", strings.Join(libs, ", "))
}

// TestClaimsMakeCheckAndMakeTest: README "make check: lint and unit tests only, no cluster" and
// "make test runs the end-to-end tests in three lanes at once, dealt by each test's measured
// time ... It removes the Unix users its tests made".
func TestClaimsMakeCheckAndMakeTest(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(filepath.Join(RepoRoot(), path))
		require.NoError(t, err)
		return string(b)
	}
	mk := read("Makefile")
	require.Contains(t, mk, "check:\n\tbash scripts/check.sh\n")
	require.Contains(t, mk, "clean-machine:\n\tbash scripts/clean-machine.sh\n")
	check := read("scripts/check.sh")
	require.Contains(t, check, "step lint make --no-print-directory lint\n")
	require.Contains(t, check, `step "unit tests" go test -count=1 ./...`+"\n")
	for _, never := range []string{"-tags", "cluster.sh", "tfenv.sh"} {
		require.NotContains(t, check, never, "make check must need no cluster and no Python environment")
	}
	test := read("scripts/test.sh")
	for _, want := range []string{
		"\nbash scripts/check.sh\n",
		`lanes=${TFYARN_TEST_LANES:-4}`,
		`"$logs/testlanes" plan -lanes "$lanes"`,
		`"$logs/testlanes" report -times .maketest/times.tsv`,
		`remove_test_user "$name"`,
		`test_users_made '^tfyarn-'`,
	} {
		require.Contains(t, test, want)
	}
	require.FileExists(t, filepath.Join(RepoRoot(), "bench", "results", "maketest-times.tsv"))
}
