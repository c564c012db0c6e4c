//go:build e2e

package client

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The Go API against both clusters:
//
//	go test -tags e2e -run E2E ./client/
func TestE2EClient(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	clustertest.EachCluster(t, func(t *testing.T, c *clustertest.Cluster) {
		conf, err := hadoopconf.LoadDir(c.ConfDir)
		require.NoError(t, err)
		t.Run("RunOnYarn", func(t *testing.T) { testRunOnYarn(t, conf, bin) })
		t.Run("CancelKills", func(t *testing.T) { testCancelKills(t, conf, bin) })
	})
}

func job(t *testing.T, conf *hadoopconf.Config, bin, spec string, argv ...string) Job {
	g, err := taskspec.ParseSpec(taskspec.Worker, spec)
	require.NoError(t, err)
	return Job{
		Job:    taskspec.Job{Name: "tfyarn-client-e2e", Tasks: []taskspec.TaskGroup{g}, Command: argv[0], Args: argv[1:]},
		Binary: bin, Tags: []string{"e2e"},
	}
}

func testRunOnYarn(t *testing.T, conf *hadoopconf.Config, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := RunOnYarn(ctx, Connection{conf: conf}, job(t, conf, bin, "2x1c,128m", "sh", "-c", `test "$TFYARN_TASK" = "worker:$TFYARN_TASK_INDEX"`))
	require.NoError(t, err)
	require.True(t, res.Succeeded(), "%+v", res)
	require.Equal(t, "all 2 tasks succeeded", res.Diagnostics)
	requireGone(t, ctx, conf, res.AppID)

	// A failing job: a Result and a *JobError.
	res, err = RunOnYarn(ctx, Connection{conf: conf}, job(t, conf, bin, "1c,128m", "sh", "-c", "exit 7"))
	var je *JobError
	require.ErrorAs(t, err, &je)
	require.Equal(t, "FAILED", res.FinalStatus)
	require.Contains(t, res.Diagnostics, "worker:0")
	require.Contains(t, res.Diagnostics, "exit code 7")
	require.Zero(t, res.UploadedBytes)
}

// testCancelKills: cancelling Wait's context (Ctrl-C in the CLI) kills the
// application and still cleans up.
func testCancelKills(t *testing.T, conf *hadoopconf.Config, bin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := submitTo(ctx, conf, job(t, conf, bin, "1c,128m", "sleep", "120"))
	require.NoError(t, err)
	defer s.Close()
	waitCtx, stop := context.WithCancel(ctx)
	var mu sync.Mutex
	var states []string
	res, err := s.Wait(waitCtx, func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		if ev.StateChanged {
			states = append(states, ev.State)
		}
		if ev.State == "RUNNING" {
			stop()
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, "KILLED", res.State, "%+v", res)
	require.Contains(t, states, "RUNNING")
	require.Equal(t, "KILLED", states[len(states)-1])
	requireGone(t, ctx, conf, s.AppID)
}

func requireGone(t *testing.T, ctx context.Context, conf *hadoopconf.Config, appID string) {
	t.Helper()
	fs, err := hdfs.Connect(ctx, conf, ipc.DefaultUser())
	require.NoError(t, err)
	defer fs.Close()
	exists, err := fs.Exists(ctx, hdfs.StagingDir(fs.User(), appID))
	require.NoError(t, err)
	require.False(t, exists, "staging directory of %s", appID)
}
