//go:build e2e

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// --secret-env NAME passes this environment's NAME to every task without
// its value landing anywhere else: not on a command line, in the job file,
// a launch context (YARN's launch script, `yarn logs`), a log, a token
// file the tasks' node keeps, or the job's history. The tasks check the
// value by its hash (the value itself would be on their command line).
//
//	go test -tags e2e -run E2ESecretEnv ./cmd/tfyarn/
func TestE2ESecretEnv(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	secret := "tfyarn-probe-secret-" + randomHex(t) + randomHex(t)
	sum := sha256.Sum256([]byte(secret))
	t.Setenv("TFYARN_PROBE_SECRET", secret)

	program := `[ "$(printf %s "$TFYARN_PROBE_SECRET" | sha256sum | cut -c1-64)" = ` + hex.EncodeToString(sum[:]) + ` ] || { echo "wrong or no secret" >&2; exit 3; }; echo "secret ok"; ` + waitForRelease
	j := startFaultJob(t, c, bin, "--secret-env", "TFYARN_PROBE_SECRET", "--worker", "2x1c,256m", "--", "sh", "-c", program)
	j.waitRegistered(t, "worker:0")
	j.waitRegistered(t, "worker:1")

	// While it runs: the job file in the staging directory, and the token
	// files in the AM's and the tasks' container directories.
	ctx, fs, user := connectHDFS(t, c)
	f, err := fs.Open(ctx, path.Join(hdfs.StagingDir(user, j.appID), contract.JobFileName))
	require.NoError(t, err)
	jobFile := make([]byte, f.Size())
	_, _ = f.ReadAt(jobFile, 0)
	f.Close()
	require.NotEmpty(t, jobFile)
	require.NotContains(t, string(jobFile), secret, "the job file")
	am, _ := findAM(j.appID)
	require.NotZero(t, am)
	var files []string
	for _, pid := range []int{am, programPID(t, j.appID, "worker:0"), programPID(t, j.appID, "worker:1")} {
		cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
		require.NoError(t, err)
		found, _ := filepath.Glob(filepath.Join(cwd, "*tokens*"))
		hidden, _ := filepath.Glob(filepath.Join(cwd, ".*tokens*"))
		files = append(files, append(found, hidden...)...)
	}
	require.NotEmpty(t, files)
	for _, p := range files {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NotContains(t, string(data), secret, p)
	}
	for _, pid := range []int{am} {
		cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		require.NotContains(t, string(cmdline), secret)
	}

	// The programs ran through the checks above (however long they took on a busy machine).
	j.release(t)
	j.requireEnd(t, time.Now(), 2*time.Minute, "SUCCEEDED")
	logs := appLogs(t, c, j.appID, 3)
	require.Equal(t, 2, strings.Count(logs, "secret ok"), "both tasks had the secret:\n%s", logs)
	require.Contains(t, logs, "LogType:launch_container.sh", "the launch scripts are among the logs")
	require.NotContains(t, logs, secret, "the logs (launch scripts, the AM's and the tasks' output)")
	h, err := fs.Open(ctx, hdfs.HistoryPath(user, j.appID))
	require.NoError(t, err)
	history := make([]byte, h.Size())
	_, _ = h.ReadAt(history, 0)
	h.Close()
	require.NotEmpty(t, history)
	require.NotContains(t, string(history), secret, "the job's history")

	// Bad input: a name this environment does not set.
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--secret-env", "TFYARN_PROBE_UNSET", "--worker", "1c,256m", "--", "true")
	require.Equal(t, exitUsage, code, stderr)
	require.Empty(t, stdout)
	require.Equal(t, "tfyarn: --secret-env TFYARN_PROBE_UNSET: TFYARN_PROBE_UNSET is not set in this environment; export it first\n", stderr)
}
