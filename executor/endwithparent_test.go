package executor

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// helperEndWithParent asks for SIGTERM at its parent's end, says ready on
// stdout and writes which signal came (or "none" after 20 s) to the file
// TFYARN_EXECUTOR_TEST_OUT names.
func helperEndWithParent() int {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	if err := EndWithParent(syscall.SIGTERM); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	fmt.Println("ready")
	got := "none"
	select {
	case s := <-sigs:
		got = s.String()
	case <-time.After(20 * time.Second):
	}
	if err := os.WriteFile(os.Getenv("TFYARN_EXECUTOR_TEST_OUT"), []byte(got), 0o600); err != nil {
		return 1
	}
	return 0
}

// A launcher whose parent (YARN's `bash -c ./tfyarn task ...` wrapper) is
// killed alone gets SIGTERM from the kernel, and so stops its program as a
// NodeManager's stop would, instead of running on after the container ended.
func TestEndWithParentSignalsWhenTheParentIsKilled(t *testing.T) {
	out := filepath.Join(t.TempDir(), "signal")
	// sh waits for its child, so the child's parent is sh, as the launcher's
	// is YARN's wrapper.
	wrapper := exec.Command("sh", "-c", `"$0" -test.run='^$'; sleep 60`, os.Args[0])
	wrapper.Env = append(os.Environ(), helperEnv+"=endwithparent", "TFYARN_EXECUTOR_TEST_OUT="+out)
	stdout, err := wrapper.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, wrapper.Start())
	t.Cleanup(func() { _ = wrapper.Process.Kill(); _ = wrapper.Wait() })
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		require.Equal(t, "ready\n", line)
	case <-time.After(20 * time.Second):
		t.Fatal("the helper never said ready within 20s")
	}
	require.NoError(t, wrapper.Process.Kill())
	require.Eventually(t, func() bool {
		got, err := os.ReadFile(out)
		return err == nil && len(got) > 0
	}, 15*time.Second, 20*time.Millisecond, "the helper wrote nothing to %s within 15s of its parent's end", out)
	got, _ := os.ReadFile(out)
	require.Equal(t, syscall.SIGTERM.String(), string(got), "the signal the helper received once its parent was killed")
}
