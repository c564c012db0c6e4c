package appmaster

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
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
			Container: core.Container{ID: "container_1_0002_01_000002", NodeID: "node1:4545", NodeHTTPAddress: "node1:8042", Resource: taskspec.Resources{VCores: 1, MemoryMiB: 1024}}},
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
	// The program's CPU and memory: their own report, beside the GPUs; a
	// peak at 90% of the container's 1 GiB is flagged.
	proc := contract.ProcessSample{CPUPercent: 99.5, CPUSeconds: 3, RSSBytes: 900 << 20, PeakRSSBytes: 922 << 20, Processes: 2}
	require.NoError(t, c.ReportMetrics(ctx, rendezvous.MetricsReport{Task: w0, ContainerID: "container_1_0002_01_000002", Process: &proc}))
	require.NoError(t, launcherClient(t, rv, secret, "container_1_0002_01_000003").ReportMetrics(ctx, rendezvous.MetricsReport{Task: w1, ContainerID: "container_1_0002_01_000003", Process: &proc}))
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
	require.Equal(t, &proc, rep.Tasks[0].ProcessSample)
	require.NotNil(t, rep.Tasks[0].ProcessSampled)
	require.Equal(t, int64(1<<30), rep.Tasks[0].MemoryLimitBytes)
	require.True(t, rep.Tasks[0].NearMemoryLimit)
	require.Nil(t, rep.Tasks[1].ProcessSample, "worker:1's previous container's sample")
	require.False(t, rep.Tasks[1].NearMemoryLimit)

	page := getAs(t, rv.TrackingURL(), "alice")
	require.Contains(t, page, `data-task="worker:0" data-state="running"`)
	require.Contains(t, page, "0: 75% 1011/81559 MiB")
	require.Contains(t, page, `<td class="process near-limit">100% 900 MiB (peak 922 MiB); near its 1.0 GiB limit</td>`)
	require.Contains(t, page, `href="http://node1:6006/"`)
	require.Contains(t, page, "python train.py --epochs 3")
	// Anyone else the proxy names, or none: the public view.
	for _, viewer := range []string{"", "bob", "dr.who"} {
		page := getAs(t, rv.TrackingURL(), viewer)
		require.Contains(t, page, `data-task="worker:0" data-state="running"`, viewer)
		require.Contains(t, page, "0: 75% 1011/81559 MiB", viewer)
		require.NotContains(t, page, "node1", viewer)
		require.NotContains(t, page, "train.py", viewer)
		require.Contains(t, page, `id="public-view"`, viewer)
	}
}

// getAs GETs url as the proxy does for viewer (none: "").
func getAs(t *testing.T, url, viewer string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if viewer != "" {
		req.Header.Set("Cookie", "proxy-user="+viewer)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// TestStatusPageProgress: a launcher's progress report, sent alone, shows
// on the task and as the job's (worker:0's without a chief) with a rate
// once it moved, goes to YARN through JobProgress, and leaves the task's
// GPUs alone.
func TestStatusPageProgress(t *testing.T) {
	worker, _ := taskspec.ParseSpec(taskspec.Worker, "2x1c,1g")
	job := taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Command: "sh"}
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	key, err := contract.NewStatusKey()
	require.NoError(t, err)
	rv, err := StartRendezvous(RendezvousConfig{AppID: "application_1_0003", User: "alice", Job: job, Secret: secret, Host: "127.0.0.1", Listen: "127.0.0.1:0",
		Web: WebAccess{StatusKey: key, ProxyHosts: []string{"localhost"}}})
	require.NoError(t, err)
	defer rv.Close(0)
	w0, w1 := taskspec.TaskID{Type: taskspec.Worker}, taskspec.TaskID{Type: taskspec.Worker, Index: 1}
	c0, c1 := "container_1_0003_01_000002", "container_1_0003_01_000003"
	rv.Observe(Snapshot{Tasks: []core.TaskStatus{
		{Task: w0, State: core.TaskRunning, Container: core.Container{ID: c0}},
		{Task: w1, State: core.TaskRunning, Container: core.Container{ID: c1}},
	}})
	rv.Assign(w0, c0)
	rv.Assign(w1, c1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	_, ok := rv.JobProgress()
	require.False(t, ok, "no program reported: YARN gets the loop's own progress")
	cl0, cl1 := launcherClient(t, rv, secret, c0), launcherClient(t, rv, secret, c1)
	gpu := []contract.GPUSample{{Index: 0, UtilizationPct: 50, MemoryTotalMiB: 10}}
	require.NoError(t, cl0.ReportMetrics(ctx, rendezvous.MetricsReport{Task: w0, ContainerID: c0, GPUs: gpu}))
	require.NoError(t, cl1.ReportMetrics(ctx, rendezvous.MetricsReport{Task: w1, ContainerID: c1, Progress: &contract.Progress{Fraction: 0.9, Step: 9, Total: 10}}))
	f, ok := rv.JobProgress()
	require.True(t, ok)
	require.Equal(t, 0.9, f, "worker:0 silent: the slowest reporting worker's")
	require.NoError(t, cl0.ReportMetrics(ctx, rendezvous.MetricsReport{Task: w0, ContainerID: c0, Progress: &contract.Progress{Fraction: 0.1, Step: 10, Total: 100}}))
	time.Sleep(200 * time.Millisecond)
	require.NoError(t, cl0.ReportMetrics(ctx, rendezvous.MetricsReport{Task: w0, ContainerID: c0, Progress: &contract.Progress{Fraction: 0.2, Step: 20, Total: 100}}))

	f, ok = rv.JobProgress()
	require.True(t, ok)
	require.Equal(t, 0.2, f, "worker:0 speaks for a job without a chief")
	var rep contract.StatusReport
	require.NoError(t, json.Unmarshal([]byte(getWithKey(t, "http://"+rv.Address()+contract.StatusPath, key)), &rep))
	require.Equal(t, gpu, rep.Tasks[0].GPUs, "a progress report leaves the GPUs alone")
	require.Equal(t, &contract.Progress{Fraction: 0.2, Step: 20, Total: 100}, rep.Tasks[0].Progress)
	require.NotNil(t, rep.Tasks[0].ProgressAt)
	require.NotNil(t, rep.Progress)
	require.Equal(t, "worker:0", rep.Progress.Task)
	require.Equal(t, int64(20), rep.Progress.Step)
	require.NotNil(t, rep.Progress.StepsPerSecond)
	require.Greater(t, *rep.Progress.StepsPerSecond, 5.0)
	require.Less(t, *rep.Progress.StepsPerSecond, 60.0) // 10 steps in ≥ 0.2 s
	require.NotNil(t, rep.Progress.ETASeconds)

	page := get(t, rv.TrackingURL())
	require.Regexp(t, `id="progress">20.0% \(20/100, worker:0\) · [0-9.]+ steps/s · ETA [0-9]+s<`, page)
}

// A status request that asks to wait for the end (the client's watch) is
// answered the moment the report turns final, not at its next poll.
func TestStatusPageAnswersAWaitAtTheEnd(t *testing.T) {
	worker, _ := taskspec.ParseSpec(taskspec.Worker, "1x1c,1g")
	p := &statusPage{}
	p.init("application_1_0003", "alice", taskspec.Job{Tasks: []taskspec.TaskGroup{worker}})
	answered := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		rec := httptest.NewRecorder()
		p.serveJSON(rec, httptest.NewRequest(http.MethodGet, contract.StatusPath+"?"+contract.StatusWaitParam+"="+contract.StatusWaitFinal, nil))
		answered <- rec
	}()
	select {
	case <-answered:
		t.Fatal("answered before the end")
	case <-time.After(300 * time.Millisecond):
	}
	endedAt := time.Now()
	p.update(Snapshot{Finish: &core.Finish{Status: core.Succeeded, Diagnostics: "all 1 tasks succeeded"}})
	select {
	case rec := <-answered:
		require.Less(t, time.Since(endedAt), 200*time.Millisecond)
		var rep contract.StatusReport
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &rep))
		require.True(t, rep.Final)
		require.Equal(t, "SUCCEEDED", rep.FinalStatus)
	case <-time.After(contract.StatusWaitMax + time.Second):
		t.Fatal("no answer at the end")
	}

	// A caller that goes away is not held for.
	ctx, cancel := context.WithCancel(context.Background())
	p2 := &statusPage{}
	p2.init("application_1_0004", "alice", taskspec.Job{Tasks: []taskspec.TaskGroup{worker}})
	done := make(chan struct{})
	go func() {
		p2.serveJSON(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, contract.StatusPath+"?wait=final", nil).WithContext(ctx))
		close(done)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("held for a caller that went away")
	}
}
