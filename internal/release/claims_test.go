package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// TestClaimsInstallAndReleasing: README's Install names the files `make release` writes (the
// wheel, the tarball and its directory, SHA256SUMS) by the names this package gives them, and
// docs/development.md's Releasing names the build's flags and formats as they are. The release's
// e2e test (TestE2ERelease) holds the rest: two builds' same bytes, the static arm64 ELF, pip
// installing the binary itself and a job through it.
func TestClaimsInstallAndReleasing(t *testing.T) {
	install := clustertest.DocSection(t, "## Install")
	require.Contains(t, install, "Nothing is published to PyPI yet")
	require.Contains(t, install, "pip install ./"+WheelName("0.1.0", "amd64")+"\n")
	require.Contains(t, install, "sha256sum -c --ignore-missing SHA256SUMS\n")
	require.Contains(t, install, "tar xzf tfyarn-0.1.0-linux-amd64.tar.gz\n")
	require.Contains(t, install, "sudo install tfyarn-0.1.0-linux-amd64/tfyarn /usr/local/bin/\n")
	require.Contains(t, install, "CGO_ENABLED=0 go install -trimpath ./cmd/tfyarn")

	releasing := strings.Join(strings.Fields(clustertest.DocSection(t, "## Releasing")), " ")
	require.Contains(t, releasing, `-ldflags "`+LinkerFlags("X.Y.Z")+`"`)
	require.Contains(t, releasing, "`tfyarn-X.Y.Z-linux-ARCH.tar.gz`")
	require.Contains(t, releasing, "`tfyarn-X.Y.Z-py3-none-manylinux_2_17_ARCH.manylinux2014_ARCH.whl`")
	require.Equal(t, "tfyarn-0.1.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", WheelName("0.1.0", "amd64"))
	require.Contains(t, releasing, "CycloneDX 1.5 JSON")
	require.Contains(t, releasing, "`X.Y.Z-rcN`, `-alphaN`, `-betaN`")

	mk, err := os.ReadFile(filepath.Join(clustertest.RepoRoot(), "Makefile"))
	require.NoError(t, err)
	require.Contains(t, string(mk), "bin/mkrelease -version '$(VERSION)' -out dist\n")
	ignore, err := os.ReadFile(filepath.Join(clustertest.RepoRoot(), ".gitignore"))
	require.NoError(t, err)
	require.Contains(t, string(ignore), "\n/dist/\n")
}
