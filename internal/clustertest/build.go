package clustertest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// binDirPrefix names the directories BuildTfyarn builds into, one per test
// process: <TMPDIR>/tfyarn-e2e-bin-<pid>.
const binDirPrefix = "tfyarn-e2e-bin-"

// BuildTfyarn builds the tfyarn binary as `make build` does (CGO_ENABLED=0,
// -trimpath: the binary the client ships must run in a container) and returns
// its path. It builds once per test binary; later calls return the same file.
// No test owns the file, so no test's cleanup removes it: each build removes
// instead the directories of test processes that have exited.
func BuildTfyarn(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() { builtBin, buildErr = buildTfyarn() })
	if buildErr != nil {
		t.Fatalf("clustertest: %v", buildErr)
	}
	return builtBin
}

func buildTfyarn() (string, error) {
	removeStaleBinDirs()
	dir := filepath.Join(os.TempDir(), binDirPrefix+strconv.Itoa(os.Getpid()))
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "tfyarn")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/tfyarn")
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/tfyarn: %v\n%s", err, out)
	}
	return bin, nil
}

// removeStaleBinDirs removes what earlier test processes built, once they
// have exited. Best effort.
func removeStaleBinDirs() {
	entries, _ := os.ReadDir(os.TempDir())
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), binDirPrefix))
		if !e.IsDir() || !strings.HasPrefix(e.Name(), binDirPrefix) || err != nil || pid <= 0 {
			continue
		}
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			_ = os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
		}
	}
}
