package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"

	pythonsdk "github.com/tfyarn/tfyarn/python"
)

var commitTime = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func TestCheckVersion(t *testing.T) {
	for _, v := range []string{"0.1.0", "1.22.333", "1.2.0-rc1", "1.2.0-alpha.2", "2.0.0-beta3"} {
		require.NoError(t, CheckVersion(v), v)
	}
	for _, v := range []string{"", "1.2", "v1.2.3", "1.2.3-dirty", "01.2.3", "1.2.3-rc", "1.2.3 ", "1.2.3-rc1-dirty"} {
		err := CheckVersion(v)
		require.Error(t, err, v)
		require.NotContains(t, err.Error(), "\n")
		require.Contains(t, err.Error(), "make release VERSION=X.Y.Z")
	}
	require.Equal(t, "1.2.0rc1", WheelVersion("1.2.0-rc1"))
	require.Equal(t, "1.2.0a2", WheelVersion("1.2.0-alpha.2"))
	require.Equal(t, "1.2.0", WheelVersion("1.2.0"))
}

func TestTarGzIsDeterministicWithFixedOwnersAndModes(t *testing.T) {
	files := []File{
		{Name: "d/tfyarn", Mode: 0o755, Data: []byte("binary")},
		{Name: "d/LICENSE", Mode: 0o644, Data: []byte("license")},
	}
	var a, b bytes.Buffer
	require.NoError(t, WriteTarGz(&a, files, commitTime))
	require.NoError(t, WriteTarGz(&b, []File{files[1], files[0]}, commitTime))
	require.Equal(t, a.Bytes(), b.Bytes(), "the order given must not matter")

	zr, err := gzip.NewReader(bytes.NewReader(a.Bytes()))
	require.NoError(t, err)
	require.Empty(t, zr.Name)
	require.True(t, zr.ModTime.IsZero(), "gzip header time %v", zr.ModTime)
	tr := tar.NewReader(zr)
	var names []string
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, hdr.Name)
		require.Equal(t, 0, hdr.Uid)
		require.Equal(t, 0, hdr.Gid)
		require.Equal(t, "root", hdr.Uname)
		require.True(t, hdr.ModTime.Equal(commitTime), "%s: %v", hdr.Name, hdr.ModTime)
		want := map[string]int64{"d/tfyarn": 0o755, "d/LICENSE": 0o644}[hdr.Name]
		require.Equal(t, want, hdr.Mode, hdr.Name)
	}
	require.Equal(t, []string{"d/LICENSE", "d/tfyarn"}, names)
}

func TestWheelHasValidRecordMetadataAndExecutableScript(t *testing.T) {
	var a, b bytes.Buffer
	require.NoError(t, WriteWheel(&a, "1.2.0-rc1", "arm64", []byte("\x7fELF binary"), []byte("license"), commitTime))
	require.NoError(t, WriteWheel(&b, "1.2.0-rc1", "arm64", []byte("\x7fELF binary"), []byte("license"), commitTime))
	require.Equal(t, a.Bytes(), b.Bytes())
	require.Equal(t, "tfyarn-1.2.0rc1-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", WheelName("1.2.0-rc1", "arm64"))

	zr, err := zip.NewReader(bytes.NewReader(a.Bytes()), int64(a.Len()))
	require.NoError(t, err)
	contents := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		contents[f.Name], err = io.ReadAll(rc)
		require.NoError(t, err)
		if f.Name == "tfyarn-1.2.0rc1.data/scripts/tfyarn" {
			require.Equal(t, os.FileMode(0o755), f.Mode().Perm())
		}
	}
	record := "tfyarn-1.2.0rc1.dist-info/RECORD"
	require.Equal(t, record, zr.File[len(zr.File)-1].Name, "RECORD comes last")
	lines := strings.Split(strings.TrimSuffix(string(contents[record]), "\n"), "\n")
	require.Len(t, lines, len(zr.File), "RECORD names every file once")
	for _, line := range lines {
		parts := strings.Split(line, ",")
		require.Len(t, parts, 3, line)
		data, ok := contents[parts[0]]
		require.True(t, ok, "RECORD names %s, which the wheel lacks", parts[0])
		if parts[0] == record {
			require.Equal(t, ",", parts[1]+","+parts[2])
			continue
		}
		sum := sha256.Sum256(data)
		require.Equal(t, "sha256="+base64.RawURLEncoding.EncodeToString(sum[:]), parts[1], parts[0])
		require.Equal(t, strconv.Itoa(len(data)), parts[2], parts[0])
	}
	meta := string(contents["tfyarn-1.2.0rc1.dist-info/METADATA"])
	for _, field := range []string{"Metadata-Version: 2.1\n", "Name: tfyarn\n", "Version: 1.2.0rc1\n", "Requires-Python: >=3.8\n", "License: Apache-2.0\n", "Summary: ", "Requires-Dist: cloudpickle==" + CloudpickleVersion + "\n"} {
		require.Contains(t, meta, field)
	}
	wheel := string(contents["tfyarn-1.2.0rc1.dist-info/WHEEL"])
	require.Contains(t, wheel, "Root-Is-Purelib: false\n")
	require.Contains(t, wheel, "Tag: py3-none-manylinux_2_17_aarch64\nTag: py3-none-manylinux2014_aarch64\n")
	require.Contains(t, string(contents["tfyarn/_version.py"]), `__version__ = "1.2.0rc1"`)
	require.Contains(t, string(contents["tfyarn/_version.py"]), `__binary_version__ = "1.2.0-rc1"`)
	for _, f := range pythonsdk.Files() {
		require.Equal(t, string(f.Data), string(contents[f.Name]), "the wheel's %s is python/%s", f.Name, f.Name)
	}
}

func TestWheelRequiresTheNotebooksCloudpickle(t *testing.T) {
	data, err := os.ReadFile("../../examples/requirements-notebook.txt")
	require.NoError(t, err)
	require.Contains(t, strings.Split(string(data), "\n"), "cloudpickle=="+CloudpickleVersion,
		"the wheel's Requires-Dist pin is the notebook environment's cloudpickle")
	install := strings.Join(strings.Fields(clustertest.DocSection(t, "## Installing the Python package")), " ")
	require.Contains(t, install, "the wheel requires the version pinned in `examples/requirements-notebook.txt` (`Requires-Dist: cloudpickle==` it)")
}

func TestSBOMIsCycloneDXOfTheBinarysModules(t *testing.T) {
	info := &debug.BuildInfo{
		GoVersion: "go1.26.11", Main: debug.Module{Path: "github.com/tfyarn/tfyarn", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "github.com/stretchr/testify", Version: "v1.11.1", Sum: "h1:abc="},
			{Path: "example.com/old", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/new", Version: "v1.0.1", Sum: "h1:def="}},
		},
		Settings: []debug.BuildSetting{{Key: "GOARCH", Value: "arm64"}, {Key: "-ldflags", Value: "-s -w"}},
	}
	a, err := sbomOf(info, "1.2.3", commitTime)
	require.NoError(t, err)
	b, err := sbomOf(info, "1.2.3", commitTime)
	require.NoError(t, err)
	require.Equal(t, a, b)
	var bom cdxBOM
	require.NoError(t, json.Unmarshal(a, &bom))
	require.Equal(t, "CycloneDX", bom.BOMFormat)
	require.Equal(t, "1.5", bom.SpecVersion)
	require.Regexp(t, `^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, bom.SerialNumber)
	require.Equal(t, "2026-11-29T10:00:00Z", bom.Metadata.Timestamp)
	require.Equal(t, "pkg:golang/github.com/tfyarn/tfyarn@v1.2.3", bom.Metadata.Component.PURL)
	found := false
	for _, c := range bom.Components {
		require.Equal(t, fmt.Sprintf("pkg:golang/%s@%s", c.Name, c.Version), c.PURL)
		if c.Name == "github.com/stretchr/testify" {
			found = true
			require.Equal(t, "go:module:sum", c.Properties[0].Name)
			require.Regexp(t, `^h1:`, c.Properties[0].Value)
		}
	}
	require.True(t, found, "testify is not among the components")
	require.Equal(t, "pkg:golang/example.com/new@v1.0.1", bom.Components[1].PURL, "a replaced module is its replacement")
	require.Contains(t, bom.Metadata.Component.Properties, cdxProperty{Name: "go:build:GOARCH", Value: "arm64"})
	require.Len(t, bom.Dependencies[0].DependsOn, len(bom.Components))
}

func TestChecksumsAreSha256sumsFormat(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.whl"), []byte("b"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.tar.gz"), []byte("a"), 0o644))
	require.NoError(t, WriteChecksums(dir))
	got, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	require.NoError(t, err)
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64}  a\.tar\.gz\n[0-9a-f]{64}  b\.whl\n$`), string(got))
	require.Contains(t, string(got), fmt.Sprintf("%x  a.tar.gz", sha256.Sum256([]byte("a"))))
}
