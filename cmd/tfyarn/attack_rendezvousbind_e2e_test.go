//go:build e2e

package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestE2EAttackRendezvousBlame (issue 21.8): whoever gets hold of one
// container's rendezvous credentials (here: worker:0's, from the
// NodeManager's private copy of its token file, which anyone running as the
// NodeManager's user can read) tries to get the healthy worker:1 blamed by
// reporting its exit with code 1. The AM refuses (403: worker:0's container
// speaks only for worker:0; 401 when it signs as worker:1's container), the
// job SUCCEEDS, and neither that file nor the AM's own token file holds the
// job's secret, from which every container's key derives.
//
//	go test -tags e2e -run '^TestE2EAttackRendezvousBlame$' ./cmd/tfyarn/
func TestE2EAttackRendezvousBlame(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	dir := clustertest.ContainerDir(t)
	release := filepath.Join(dir, "release")
	name := "e2e-attack-blame-" + randomHex(t)
	run := startHeldRun(t, c, 3*time.Minute, release, bin, "run", "--name", name, "--worker", "2x1c,256m", "--output", "json", "--",
		"sh", "-c", `touch `+dir+`/up.$TFYARN_TASK_INDEX; while [ ! -e `+release+` ]; do sleep 0.2; done`)
	appID := waitForRunning(t, c, bin, name)
	pid := amPID(t, appID)
	addrs := listeningAddrs(t, pid)
	require.Len(t, addrs, 1, "the AM's one port")
	am := addrs[0]

	// Both workers run; their containers, from run's progress lines.
	containers := map[int]string{}
	started := regexp.MustCompile(`worker:(\d) started in (container_\S+)`)
	deadline := time.Now().Add(2 * time.Minute)
	for len(containers) < 2 || !fileExists(filepath.Join(dir, "up.0")) || !fileExists(filepath.Join(dir, "up.1")) {
		require.True(t, time.Now().Before(deadline), "both workers running within 2m: %s", run.stderr.String())
		for _, m := range started.FindAllStringSubmatch(run.stderr.String(), -1) {
			i, _ := strconv.Atoi(m[1])
			containers[i] = m[2]
		}
		time.Sleep(200 * time.Millisecond)
	}

	// worker:0's credentials as the NodeManager keeps them.
	tokens := findFile(t, c.Dir, containers[0]+".tokens")
	creds, err := security.ReadCredentialsFile(tokens)
	require.NoError(t, err)
	key, err := rendezvous.SecretFrom(creds)
	require.NoError(t, err, "%s carries worker:0's rendezvous key", tokens)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w1 := taskspec.TaskID{Type: taskspec.Worker, Index: 1}
	blame := rendezvous.ExitReport{Task: w1, ContainerID: containers[1], ExitCode: 1, StderrTail: []string{"planted failure"}}
	as0, err := rendezvous.NewClient(am, containers[0], key)
	require.NoError(t, err)
	defer as0.Close()
	require.ErrorIs(t, as0.ReportExit(ctx, blame), rendezvous.ErrForbidden, "worker:0's key names worker:1's container")
	own := blame
	own.ContainerID = containers[0]
	require.ErrorIs(t, as0.ReportExit(ctx, own), rendezvous.ErrForbidden, "worker:0's container reports for worker:1")
	as1, err := rendezvous.NewClient(am, containers[1], key)
	require.NoError(t, err)
	defer as1.Close()
	// No answer verifies for it: retried until its own deadline, then unauthorized.
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	defer cancelShort()
	require.ErrorIs(t, as1.ReportExit(short, blame), rendezvous.ErrUnauthorized, "worker:0's key signing as worker:1's container")

	// The job's secret is in neither token file.
	amTokens, err := security.ReadCredentialsFile(filepath.Join("/proc", strconv.Itoa(pid), "cwd", "container_tokens"))
	require.NoError(t, err)
	_, ok := amTokens.Secret(rendezvous.SecretAlias)
	require.False(t, ok, "the AM's token file still holds the job's rendezvous secret")

	require.NoError(t, run.finish())
	r := runJSON(t, run.stdout.String())
	require.Equal(t, "SUCCEEDED", r.FinalStatus, r.Diagnostics)
	require.NotContains(t, run.stderr.String(), "planted failure")
	requireNoStaging(t, c, appID)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// findFile finds the file called name under root (the cluster's state).
func findFile(t *testing.T, root, name string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	if y := filepath.Join(root, "data", "yarn"); fileExists(y) {
		root = y // the NodeManagers' directories
	}
	var found string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	require.NotEmpty(t, found, "no %s under %s", name, root)
	return found
}
