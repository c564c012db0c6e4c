//go:build e2e

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// A program that detaches a grandchild (setsid, SIGTERM and SIGHUP
// ignored) and ends: the grandchild must not outlive the job, orphaned to
// pid 1. The launcher is a child subreaper and ends what its program left
// behind (SIGTERM, a grace, SIGKILL) before reporting the exit; on YARN
// (containers run as this machine's user, so the test sees the process
// table) and under --local.
//
//	go test -tags e2e -run E2EDetachedGrandchild ./cmd/tfyarn/
func TestE2EDetachedGrandchild(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	// A unique sleep, found by its command line.
	detaching := func(t *testing.T) (program, sleep string) {
		n, err := strconv.ParseUint(randomHex(t), 16, 64)
		require.NoError(t, err)
		sleep = fmt.Sprintf("302.%d", n)
		return `(setsid sh -c "trap \"\" TERM HUP; exec sleep ` + sleep + `" &); sleep 2`, sleep
	}
	t.Run("yarn", func(t *testing.T) {
		t.Parallel()
		c := clustertest.Require(t)
		program, sleep := detaching(t)
		stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--output", "json", "--worker", "1c,256m", "--", "sh", "-c", program)
		require.Equal(t, exitOK, code, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		requireNoProcess(t, "sleep\x00"+sleep+"\x00")
		requireNoContainerProcess(t, r.AppID)
	})
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		program, sleep := detaching(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, "run", "--local", "--worker", "1c", "--", "sh", "-c", program).CombinedOutput()
		require.NoError(t, err, "%s", out)
		requireNoProcess(t, "sleep\x00"+sleep+"\x00")
	})
}

// requireNoProcess: no process's command line (NUL-separated) contains
// cmdline once the job has ended; any found is killed when the test ends.
func requireNoProcess(t *testing.T, cmdline string) {
	t.Helper()
	find := func() []int {
		var found []int
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			data, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if strings.Contains(string(data), cmdline) {
				found = append(found, pid)
			}
		}
		return found
	}
	left := find()
	for _, pid := range left {
		t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	}
	require.Empty(t, left, "processes %q outlived the job", strings.ReplaceAll(cmdline, "\x00", " "))
}
