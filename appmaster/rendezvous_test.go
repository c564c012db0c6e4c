package appmaster

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/contract"
	"github.com/tfyarn/tfyarn/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

func TestTaskRendezvous(t *testing.T) {
	chief, _ := taskspec.ParseSpec(taskspec.Chief, "1c")
	worker, _ := taskspec.ParseSpec(taskspec.Worker, "1c")
	job := taskspec.Job{Tasks: []taskspec.TaskGroup{chief, worker}, Command: "true"}
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	rv, err := StartRendezvous(RendezvousConfig{AppID: "application_1_0001", Job: job, Secret: secret, Host: "127.0.0.1", Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	require.Equal(t, "http://"+rv.Address()+"/", rv.TrackingURL())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rendezvous.NewClient(rv.Address(), secret, rendezvous.WithLongPoll(time.Second))
	require.NoError(t, err)
	defer c.Close()
	chief0 := taskspec.TaskID{Type: taskspec.Chief}
	rv.Assign(chief0, "container_1_0001_01_000002")
	rv.Assign(worker0, "container_1_0001_01_000003")
	require.NoError(t, c.Register(ctx, rendezvous.Registration{Task: chief0, Host: "127.0.0.1", Port: 2222, ContainerID: "container_1_0001_01_000002"}))
	require.Error(t, c.Register(ctx, rendezvous.Registration{Task: worker0, Host: "127.0.0.1", Port: 2223, ContainerID: "container_1_0001_01_000009"}),
		"only the assigned container may register")
	require.NoError(t, c.Register(ctx, rendezvous.Registration{Task: worker0, Host: "127.0.0.1", Port: 2223, ContainerID: "container_1_0001_01_000003"}))
	spec, err := c.WaitSpec(ctx, worker0)
	require.NoError(t, err)
	require.Equal(t, []string{"127.0.0.1:2223"}, spec[taskspec.Worker])
	require.Equal(t, []Event{
		TaskRegistered{Task: chief0, Host: "127.0.0.1", Port: 2222},
		TaskRegistered{Task: worker0, Host: "127.0.0.1", Port: 2223},
	}, rv.Drain())

	require.NoError(t, c.ReportExit(ctx, rendezvous.ExitReport{Task: chief0, ContainerID: "container_1_0001_01_000002", ExitCode: 1, StderrTail: []string{"boom"}}))
	require.Equal(t, []Event{ContainerCompleted{ID: "container_1_0001_01_000002", ExitStatus: 1, Diagnostics: "the program exited with code 1"}}, rv.Drain())
	require.Equal(t, []string{"boom"}, rv.StderrTail(chief0, "container_1_0001_01_000002"))

	// The status page: the tasks, their addresses and exits, never the secret.
	m, err := New(Config{Job: job})
	require.NoError(t, err)
	rv.Observe(Snapshot{Tasks: m.Tasks()})
	body := get(t, "http://"+rv.Address()+contract.StatusPath)
	var rep contract.StatusReport
	require.NoError(t, json.Unmarshal([]byte(body), &rep))
	require.Equal(t, "application_1_0001", rep.AppID)
	require.Len(t, rep.Tasks, 2)
	require.Equal(t, "chief:0", rep.Tasks[0].Task)
	require.Nil(t, rep.Tasks[0].ExitCode)
	text := get(t, rv.TrackingURL())
	require.Contains(t, text, "chief:0")
	for _, page := range []string{body, text} {
		require.NotContains(t, page, hex.EncodeToString(secret))
		require.NotContains(t, page, base64.StdEncoding.EncodeToString(secret))
	}

	rv.Observe(Snapshot{Tasks: m.Tasks(), Finish: &Finish{Status: Failed, Diagnostics: "chief:0 failed"}})
	done := make(chan struct{})
	go func() { rv.Close(5 * time.Second); close(done) }()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, json.Unmarshal([]byte(get(t, "http://"+rv.Address()+contract.StatusPath)), &rep))
	require.True(t, rep.Final)
	require.Equal(t, "FAILED", rep.FinalStatus)
	select {
	case <-done: // the final page was fetched: no need to linger
	case <-time.After(3 * time.Second):
		t.Fatal("Close lingered after the final page was fetched")
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}
