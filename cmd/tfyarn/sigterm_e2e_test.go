//go:build e2e

package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// A SIGTERM to the ApplicationMaster (what its NodeManager sends when the
// AM container is stopped) as soon as the AM has its first containers,
// while it starts them: the job ends KILLED with the AM's word for it,
// never FAILED because launches were cut off; the client exits 1, and
// neither the staging directory nor a container process is left.
//
//	go test -tags e2e -run E2ESigterm ./cmd/tfyarn/
func TestE2ESigtermAM(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--worker", "3x1c,256m", "--name", "e2e-sigterm", "--output", "json", "--", "sleep", "600")
	cmd.Env = c.Env()
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderrPipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	appIDs := make(chan string, 1)
	stderrDone := make(chan string)
	go func() {
		var all strings.Builder
		submitted := regexp.MustCompile(`^(application_\d+_\d+) submitted`)
		sc := bufio.NewScanner(stderrPipe)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if m := submitted.FindStringSubmatch(sc.Text()); m != nil {
				appIDs <- m[1]
			}
		}
		stderrDone <- all.String()
	}()
	var appID string
	select {
	case appID = <-appIDs:
	case <-time.After(time.Minute):
		t.Fatal("tfyarn run said nothing about a submission within a minute")
	}

	// The AM process, and its log (its stderr, in the container's log dir).
	var amPID int
	var amLog string
	require.Eventually(t, func() bool {
		amPID, amLog = findAM(appID)
		return amPID != 0
	}, time.Minute, 20*time.Millisecond, "no ApplicationMaster process for %s", appID)
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(amLog)
		return bytes.Contains(data, []byte(" allocated container_"))
	}, time.Minute, 5*time.Millisecond, "the AM got no container")
	require.NoError(t, syscall.Kill(amPID, syscall.SIGTERM))

	stderr := <-stderrDone
	err = cmd.Wait()
	log, _ := os.ReadFile(amLog)
	t.Logf("stdout: %s\nstderr: %s\nAM log:\n%s", stdout.String(), stderr, log)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, exitJobFailed, cmd.ProcessState.ExitCode())
	r := runJSON(t, stdout.String())
	require.Equal(t, appID, r.AppID)
	require.Equal(t, "KILLED", r.FinalStatus)
	require.Contains(t, r.Diagnostics, "killed: the ApplicationMaster was stopped (YARN kill or SIGTERM)")
	require.NotContains(t, string(log), " failed to start in ")
	require.Contains(t, string(log), "terminating: context canceled")
	require.Contains(t, string(log), "job KILLED: ")
	// The RM reports the final status as soon as the AM unregisters: the
	// AM's own line saying so may land a moment after the client exited.
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(amLog)
		return bytes.Contains(data, []byte("unregistered"))
	}, 10*time.Second, 50*time.Millisecond, "the AM never logged its unregistration")
	requireNoStaging(t, c, appID)
	requireNoContainerProcess(t, appID)
}

// findAM returns the pid of appID's ApplicationMaster (`./tfyarn am`,
// running in the AM container's working directory) and the file its
// stderr goes to; 0 when it is not running.
func findAM(appID string) (int, string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		cwd, _ := os.Readlink(filepath.Join(dir, "cwd"))
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if !strings.Contains(cwd, appID) || !strings.HasPrefix(string(cmdline), "./tfyarn\x00am\x00") {
			continue
		}
		if log, err := os.Readlink(filepath.Join(dir, "fd", "2")); err == nil {
			return pid, log
		}
	}
	return 0, ""
}
