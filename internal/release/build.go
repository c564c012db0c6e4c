package release

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// VersionSymbol is the variable the release build sets to the version (internal/buildinfo's).
const VersionSymbol = "github.com/tfyarn/tfyarn/internal/buildinfo.version"

// Arches are the architectures a release is built for, all linux.
var Arches = []string{"amd64", "arm64"}

// Request is one release: the version, the source tree, the commit's time and where it goes.
type Request struct {
	Version string
	Root    string    // the module's root directory
	Commit  time.Time // every file's time (SOURCE_DATE_EPOCH)
	Out     string    // dist/: replaced whole once everything is written
	Arches  []string
	Log     io.Writer // progress
}

// LinkerFlags are the release build's -ldflags: no symbol table, no build id, the version.
func LinkerFlags(version string) string { return "-s -w -buildid= -X " + VersionSymbol + "=" + version }

// BuildBinary cross-compiles the static tfyarn binary for linux/goarch into out, reproducibly:
// no cgo, no paths of this machine, no build id, no symbol table.
func BuildBinary(ctx context.Context, root, version, goarch, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", LinkerFlags(version), "-o", out, "./cmd/tfyarn")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch, "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building tfyarn for linux/%s: %v\n%s", goarch, err, b)
	}
	return nil
}

// Build writes the release into a fresh directory next to r.Out and, when every file is there,
// puts it in r.Out's place: a failed build leaves the old dist/ as it was.
func Build(ctx context.Context, r Request) error {
	if err := CheckVersion(r.Version); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(r.Out), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(r.Out), ".dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	license, err := os.ReadFile(filepath.Join(r.Root, "LICENSE"))
	if err != nil {
		return err
	}
	for _, goarch := range r.Arches {
		fmt.Fprintf(r.Log, "building tfyarn %s for linux/%s\n", r.Version, goarch)
		bin := filepath.Join(tmp, ".tfyarn-"+goarch)
		if err := BuildBinary(ctx, r.Root, r.Version, goarch, bin); err != nil {
			return err
		}
		if err := Package(tmp, r.Version, goarch, bin, license, r.Commit); err != nil {
			return err
		}
		if err := os.Remove(bin); err != nil {
			return err
		}
	}
	if err := WriteChecksums(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.RemoveAll(r.Out); err != nil {
		return err
	}
	return os.Rename(tmp, r.Out)
}

// Package writes into dir the tarball, wheel and SBOM of the linux/goarch binary at bin.
func Package(dir, version, goarch, bin string, license []byte, commit time.Time) error {
	binary, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	base := fmt.Sprintf("tfyarn-%s-linux-%s", version, goarch)
	var tgz, whl bytes.Buffer
	files := []File{
		{Name: base + "/tfyarn", Mode: 0o755, Data: binary},
		{Name: base + "/LICENSE", Mode: 0o644, Data: license},
		{Name: base + "/README", Mode: 0o644, Data: []byte(fmt.Sprintf(tarballReadme, version, goarch))},
	}
	if err := WriteTarGz(&tgz, files, commit); err != nil {
		return err
	}
	if err := WriteWheel(&whl, version, goarch, binary, license, commit); err != nil {
		return err
	}
	sbom, err := SBOM(bin, version, commit)
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{base + ".tar.gz": tgz.Bytes(), WheelName(version, goarch): whl.Bytes(), base + ".cdx.json": sbom} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

const tarballReadme = `tfyarn %s for linux/%s

tfyarn runs distributed training (TensorFlow, PyTorch, JAX) on Hadoop YARN from one static
binary. Put it on PATH (sudo install tfyarn /usr/local/bin/), point HADOOP_CONF_DIR at your
cluster's client configuration and run: tfyarn run --worker 3x1c,256m -- hostname

Licensed under the Apache License 2.0 (LICENSE).
`

// WriteChecksums writes dir/SHA256SUMS over every other file of dir, in sha256sum -c's format.
func WriteChecksums(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != "SHA256SUMS" && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%x  %s\n", sha256.Sum256(data), n)
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), b.Bytes(), 0o644)
}
