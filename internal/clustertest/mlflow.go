package clustertest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// MLflowServer is a real MLflow tracking server (the pinned mlflow of .venv-mlflow, made by
// scripts/tfenv.sh mlflow) on loopback: SQLite backend, artifacts served through its proxy
// (--serve-artifacts), in a temporary directory.
type MLflowServer struct {
	URL string // http://127.0.0.1:PORT
	// Python is the environment's interpreter, readable by the cluster's container users:
	// the tests' tasks log with its mlflow.
	Python string
}

// mlflowStartTimeout bounds the server's start: its first start on a loaded 2-core machine
// (database migrations, compiling the package) took 28 s.
const mlflowStartTimeout = 2 * time.Minute

// StartMLflow starts a tracking server for the test and stops it when the test ends.
func StartMLflow(t testing.TB) *MLflowServer {
	t.Helper()
	root := RepoRoot()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	out, err := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "tfenv.sh"), "mlflow").CombinedOutput()
	cancel()
	if err != nil {
		t.Fatalf("scripts/tfenv.sh mlflow: %v\n%s", err, out)
	}
	// The link's target, in the machine's cache that every user can read.
	venv, err := filepath.EvalSymlinks(filepath.Join(root, ".venv-mlflow"))
	if err != nil {
		t.Fatalf("the MLflow environment: %v", err)
	}
	port := unusedLoopbackPort(t)
	dir := t.TempDir()
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(filepath.Join(venv, "bin", "mlflow"), "server", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--workers", "1", "--backend-store-uri", "sqlite:///"+filepath.Join(dir, "mlflow.db"),
		"--serve-artifacts", "--artifacts-destination", filepath.Join(dir, "artifacts"))
	cmd.Dir = dir
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t.Logf("step: mlflow server on %s (at most %s to start)", url, mlflowStartTimeout)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting mlflow server: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { stopGroup(t, cmd.Process.Pid, exited); logFile.Close() })
	start := time.Now()
	for !healthy(url) {
		select {
		case <-exited:
			log, _ := os.ReadFile(logPath)
			t.Fatalf("mlflow server exited before answering on %s:\n%s", url, log)
		case <-time.After(300 * time.Millisecond):
		}
		if time.Since(start) > mlflowStartTimeout {
			log, _ := os.ReadFile(logPath)
			t.Fatalf("mlflow server did not answer on %s/health within %s:\n%s", url, mlflowStartTimeout, log)
		}
	}
	t.Logf("mlflow server answered on %s after %.1fs", url, time.Since(start).Seconds())
	return &MLflowServer{URL: url, Python: filepath.Join(venv, "bin", "python")}
}

func healthy(url string) bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url + "/health")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// stopGroup ends the server's process group: SIGTERM, then SIGKILL after 15 s.
func stopGroup(t testing.TB, pid int, exited <-chan struct{}) {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Logf("mlflow server (pid %d) still running 15 s after SIGTERM: killing it", pid)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
	}
}

// unusedLoopbackPort is a loopback port nothing listens on now.
func unusedLoopbackPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// FreeLoopbackURL is http://127.0.0.1:PORT on a port nothing listens on: a tracking server
// that is down.
func FreeLoopbackURL(t testing.TB) string {
	return fmt.Sprintf("http://127.0.0.1:%d", unusedLoopbackPort(t))
}
