package appmaster

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/appmaster/core"
	"github.com/tfyarn/tfyarn/contract"
	"github.com/tfyarn/tfyarn/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestStatusPageDecorated: the status report and the web page carry the
// job, the log links (user and NodeManager web address), times, TensorBoard
// and the GPUs a launcher reported for its current container only.
func TestStatusPageDecorated(t *testing.T) {
	worker, _ := taskspec.ParseSpec(taskspec.Worker, "2x1c,1g,1gpu")
	tb, _ := taskspec.ParseSpec(taskspec.TensorBoard, "1c,512m")
	job := taskspec.Job{Name: "mnist", Queue: "ml-gpu", NodeLabel: "gpu", Tasks: []taskspec.TaskGroup{tb, worker}, Script: "train.py", Args: []string{"--epochs", "3"}}
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	key, err := contract.NewStatusKey()
	require.NoError(t, err)
	rv, err := StartRendezvous(RendezvousConfig{AppID: "application_1_0002", User: "alice", Job: job, Secret: secret, Host: "127.0.0.1", Listen: "127.0.0.1:0",
		Web: WebAccess{StatusKey: key, ProxyHosts: []string{"localhost"}}})
	require.NoError(t, err)
	defer rv.Close(0)

	started := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w0 := taskspec.TaskID{Type: taskspec.Worker}
	w1 := taskspec.TaskID{Type: taskspec.Worker, Index: 1}
	tb0 := taskspec.TaskID{Type: taskspec.TensorBoard}
	rv.Observe(Snapshot{Tasks: []core.TaskStatus{
		{Task: w0, State: core.TaskRunning, Host: "node1", Port: 2222, StartedAt: started,
			Container: core.Container{ID: "container_1_0002_01_000002", NodeID: "node1:4545", NodeHTTPAddress: "node1:8042"}},
		{Task: w1, State: core.TaskRunning, Attempt: 1, Container: core.Container{ID: "container_1_0002_01_000005", NodeID: "node1:4545", NodeHTTPAddress: "node1:8042"}},
		{Task: tb0, State: core.TaskRunning, Host: "node1", Port: 6006, Container: core.Container{ID: "container_1_0002_01_000004"}},
	}})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rv.Assign(w0, "container_1_0002_01_000002")
	rv.Assign(w1, "container_1_0002_01_000003")
	rv.Assign(w1, "container_1_0002_01_000005")
	c := launcherClient(t, rv, secret, "container_1_0002_01_000002")
	gpu := []contract.GPUSample{{Index: 0, Name: "NVIDIA H100 80GB HBM3", UtilizationPct: 75, MemoryUsedMiB: 1011, MemoryTotalMiB: 81559}}
	require.NoError(t, c.ReportMetrics(ctx, rendezvous.MetricsReport{Task: w0, ContainerID: "container_1_0002_01_000002", GPUs: gpu}))
	// A sample from worker:1's previous container is not shown as its current one's.
	require.NoError(t, launcherClient(t, rv, secret, "container_1_0002_01_000003").ReportMetrics(ctx, rendezvous.MetricsReport{Task: w1, ContainerID: "container_1_0002_01_000003", GPUs: gpu}))
	require.ErrorIs(t, c.ReportMetrics(ctx, rendezvous.MetricsReport{Task: taskspec.TaskID{Type: taskspec.Chief}, ContainerID: "container_1_0002_01_000002", GPUs: gpu}), rendezvous.ErrUnknownTask)

	var rep contract.StatusReport
	require.NoError(t, json.Unmarshal([]byte(getWithKey(t, "http://"+rv.Address()+contract.StatusPath, key)), &rep))
	require.Equal(t, "alice", rep.User)
	require.Equal(t, &contract.JobInfo{Name: "mnist", Queue: "ml-gpu", NodeLabel: "gpu", Command: "python train.py --epochs 3",
		Groups: []contract.GroupInfo{{Type: "worker", Spec: "2x1c,1g,1gpu"}, {Type: "tensorboard", Spec: "1c,512m"}}}, rep.Job)
	require.Equal(t, "http://node1:6006/", rep.TensorBoardURL)
	require.NotNil(t, rep.StartedAt)
	require.Nil(t, rep.EndedAt)
	require.Equal(t, "http://node1:8042/node/containerlogs/container_1_0002_01_000002/alice", rep.Tasks[0].LogsURL)
	require.Equal(t, started, *rep.Tasks[0].StartedAt)
	require.Equal(t, gpu, rep.Tasks[0].GPUs)
	require.NotNil(t, rep.Tasks[0].GPUSampled)
	require.Empty(t, rep.Tasks[1].GPUs)

	page := get(t, rv.TrackingURL())
	require.Contains(t, page, `data-task="worker:0" data-state="running"`)
	require.Contains(t, page, "0: 75% 1011/81559 MiB")
	require.Contains(t, page, `href="http://node1:6006/"`)
}
