//go:build e2e

package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// The release as a user gets it: dist/ for both architectures, its amd64 files again from a second
// build into another directory (the same bytes), the arm64 binary a static aarch64 ELF, and the
// x86_64 wheel installed by pip into a fresh venv as the test user, whose `tfyarn` runs a job.
//
//	go test -tags e2e -run E2ERelease ./internal/release/
func TestE2ERelease(t *testing.T) {
	c := clustertest.Require(t)
	root := clustertest.RepoRoot()
	work := clustertest.ContainerDir(t)
	commit := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	const version = "0.1.0"
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	t.Logf("step: building the release (both architectures)")
	dist := filepath.Join(work, "dist")
	require.NoError(t, Build(ctx, Request{Version: version, Root: root, Commit: commit, Out: dist, Arches: Arches, Log: io.Discard}))
	sums := exec.Command("sha256sum", "-c", "SHA256SUMS")
	sums.Dir = dist
	out, err := sums.CombinedOutput()
	require.NoError(t, err, "sha256sum -c: %s", out)

	t.Logf("step: building linux/amd64 again into another directory: the same bytes")
	again := t.TempDir()
	require.NoError(t, BuildBinary(ctx, root, version, "amd64", filepath.Join(again, "bin", "tfyarn")))
	license, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	require.NoError(t, err)
	require.NoError(t, Package(again, version, "amd64", filepath.Join(again, "bin", "tfyarn"), license, commit))
	for _, name := range []string{"tfyarn-0.1.0-linux-amd64.tar.gz", "tfyarn-0.1.0-linux-amd64.cdx.json", WheelName(version, "amd64")} {
		first, err := os.ReadFile(filepath.Join(dist, name))
		require.NoError(t, err)
		second, err := os.ReadFile(filepath.Join(again, name))
		require.NoError(t, err)
		require.True(t, bytes.Equal(first, second), "%s differs between two builds of the same tree", name)
	}

	sbom, err := os.ReadFile(filepath.Join(dist, "tfyarn-0.1.0-linux-arm64.cdx.json"))
	require.NoError(t, err)
	require.Contains(t, string(sbom), `"purl": "pkg:golang/google.golang.org/protobuf@v`, "the SBOM lacks a module tfyarn links")
	require.Contains(t, string(sbom), `"value": "arm64"`)

	t.Run("arm64 is a static aarch64 ELF", func(t *testing.T) { requireStaticAarch64(t, filepath.Join(dist, "tfyarn-0.1.0-linux-arm64.tar.gz")) })
	t.Run("pip install and a job", func(t *testing.T) { testWheelRunsJob(t, c, work, filepath.Join(dist, WheelName(version, "amd64"))) })
}

// requireStaticAarch64 checks the tarball's tfyarn: ELF for aarch64, no interpreter (PT_INTERP),
// no shared library (DT_NEEDED): it cannot run here, so this is what says it would run there.
func requireStaticAarch64(t *testing.T, tarball string) {
	f, err := os.Open(tarball)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	var binary []byte
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if filepath.Base(hdr.Name) == "tfyarn" {
			binary, err = io.ReadAll(tr)
			require.NoError(t, err)
		}
	}
	require.NotEmpty(t, binary, "no tfyarn in %s", tarball)
	ef, err := elf.NewFile(bytes.NewReader(binary))
	require.NoError(t, err)
	require.Equal(t, elf.EM_AARCH64, ef.Machine)
	require.Equal(t, elf.ELFCLASS64, ef.Class)
	for _, p := range ef.Progs {
		require.NotEqual(t, elf.PT_INTERP, p.Type, "the arm64 binary names a dynamic loader")
	}
	libs, err := ef.ImportedLibraries()
	require.NoError(t, err)
	require.Empty(t, libs, "the arm64 binary needs shared libraries")
}

// testWheelRunsJob makes a venv as the test user, pip-installs the wheel into it from the file
// alone, and runs a one-worker job through the venv's tfyarn, which must be the binary itself.
// --no-deps: the test is offline and a command job needs no cloudpickle (the wheel's
// Requires-Dist is held by TestWheelHasValidRecordMetadataAndExecutableScript).
func testWheelRunsJob(t *testing.T, c *clustertest.Cluster, work, wheel string) {
	install := strings.Join(strings.Fields(clustertest.DocSection(t, "## Installing the Python package")), " ")
	require.Contains(t, install, "`pip install tfyarn-<version>-py3-none-<platform>.whl` installs the package and the binary.")
	name := c.User(t, clustertest.TestUser)
	venv := filepath.Join(work, "venv")
	asUser(t, c, name, work, 3*time.Minute, systemPython(t), "-m", "venv", venv)
	asUser(t, c, name, work, 3*time.Minute, filepath.Join(venv, "bin", "pip"), "install", "--no-index", "--no-deps", "--no-cache-dir", "--quiet", wheel)
	bin := filepath.Join(venv, "bin", "tfyarn")
	head := make([]byte, 4)
	f, err := os.Open(bin)
	require.NoError(t, err)
	_, err = io.ReadFull(f, head)
	f.Close()
	require.NoError(t, err)
	require.Equal(t, "\x7fELF", string(head), "pip put a shim, not the binary, at %s", bin)
	got := asUser(t, c, name, work, time.Minute, filepath.Join(venv, "bin", "python"), "-c", "import tfyarn; print(tfyarn.__version__, tfyarn.binary_path())")
	require.Equal(t, "0.1.0 "+bin, strings.TrimSpace(got))
	asUser(t, c, name, work, 3*time.Minute, bin, "--conf-dir", c.ConfDir, "run", "--name", "release-wheel", "--worker", "1x1c,256m", "--", "true")
}

// systemPython is the system's python3, which every user may run (this process's PATH may find
// one in a directory of root's).
func systemPython(t *testing.T) string {
	for _, p := range []string{"/usr/local/bin/python3", "/usr/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("no python3 in /usr/local/bin or /usr/bin: the wheel's test needs a Python every user may run")
	return ""
}

// asUser runs a command as Unix user name when the cluster runs containers as their users (else as
// this process's user, submitting as name), in dir, and requires it to succeed.
func asUser(t *testing.T, c *clustertest.Cluster, name, dir string, limit time.Duration, args ...string) string {
	t.Helper()
	t.Logf("step: %s (as %s, at most %s)", strings.Join(args, " "), name, limit)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	// The system's PATH: this process's may start with directories the test user cannot enter.
	cmd.Env = c.Env("HOME="+dir, "HADOOP_USER_NAME="+name, "PIP_DISABLE_PIP_VERSION_CHECK=1", "PATH=/usr/local/bin:/usr/bin:/bin")
	if c.RunsAsUsers() {
		u, err := user.Lookup(name)
		require.NoError(t, err)
		uid, err := strconv.Atoi(u.Uid)
		require.NoError(t, err)
		gid, err := strconv.Atoi(u.Gid)
		require.NoError(t, err)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), stdout.String(), stderr.String())
	return stdout.String()
}
