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
