package follow

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/reqsign"
)

func TestTaskChangesInTheOrderTheyHappen(t *testing.T) {
	zero := int32(0)
	prev := &contract.StatusReport{Tasks: []contract.TaskReport{{Task: "chief:0"}, {Task: "worker:0"}}}
	cur := &contract.StatusReport{Tasks: []contract.TaskReport{
		{Task: "chief:0", ContainerID: "c2", Host: "h", Port: 1, ExitCode: &zero},
		{Task: "worker:0", ContainerID: "c3"},
	}}
	var got []string
	for _, ev := range taskChanges(prev, cur) {
		got = append(got, ev.Task.Task+" "+ev.TaskChange)
	}
	require.Equal(t, []string{"chief:0 launched", "worker:0 launched", "chief:0 registered", "chief:0 ended"}, got)
	require.Empty(t, taskChanges(cur, cur))
}

// TestTaskChangesSayExitAndTensorBoard: an end says how the container
// ended, a TensorBoard task's registration its URL (run prints both).
func TestTaskChangesSayExitAndTensorBoard(t *testing.T) {
	killed := int32(137)
	cur := &contract.StatusReport{Tasks: []contract.TaskReport{
		{Task: "tensorboard:0", Type: "tensorboard", Host: "nm1", Port: 6006},
		{Task: "worker:0", Type: "worker", Host: "nm2", Port: 2222, ExitCode: &killed},
	}}
	var got []string
	for _, ev := range taskChanges(&contract.StatusReport{}, cur) {
		got = append(got, ev.Task.Task+" "+ev.TaskChange+" "+ev.Exit+" "+ev.TensorBoardURL)
	}
	require.Equal(t, []string{"tensorboard:0 registered  http://nm1:6006/", "worker:0 registered  ", "worker:0 ended exit code 137 (SIGKILL) "}, got)
}

// The watcher says once when the AM's page stops answering (after it did)
// and once when it answers again.
func TestStatusWatcherNotices(t *testing.T) {
	var up atomic.Bool
	up.Store(true)
	key := []byte("0123456789abcdef0123456789abcdef")
	srv := httptest.NewServer(fakeAM(t, key, func(w http.ResponseWriter) {
		if !up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(contract.StatusReport{AppID: "application_1_0001"})
	}))
	defer srv.Close()
	var notices []string
	w := newStatusWatcher(key)
	w.url = srv.URL + contract.StatusPath
	w.notice = func(s string) { notices = append(notices, s) }
	ctx := context.Background()
	w.poll(ctx, "application_1_0001", nil)
	up.Store(false)
	for i := 0; i < 5; i++ {
		w.poll(ctx, "application_1_0001", nil)
	}
	up.Store(true)
	w.poll(ctx, "application_1_0001", nil)
	w.poll(ctx, "application_1_0001", nil)
	host := strings.TrimPrefix(srv.URL, "http://")
	require.Equal(t, []string{
		"ApplicationMaster at " + host + " not answering (client: " + srv.URL + contract.StatusPath + ": 503 Service Unavailable); following the ResourceManager's report",
		"ApplicationMaster at " + host + " answering again",
	}, notices)
}

// fakeAM checks a status request as the AM does (signed with key, fresh,
// never seen) and signs answer's answer over it.
func fakeAM(t *testing.T, key []byte, answer func(http.ResponseWriter)) http.Handler {
	v := reqsign.NewVerifier(time.Minute, 100)
	signing := contract.StatusSigningKey(key)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := reqsign.Parse(contract.StatusRequestPurpose, r)
		if err == nil {
			err = v.Verify(s, signing, time.Now())
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		rec := httptest.NewRecorder()
		answer(rec)
		body := rec.Body.Bytes()
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.Header().Set(reqsign.HeaderSignature, reqsign.SignResponse(signing, contract.StatusAnswerPurpose, s.Signature, rec.Code, body))
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// TestStatusClientRefusesForgedAnswers: the client signs a fresh request
// each time (the fake AM refuses a replay), and believes an answer only
// when it is signed with the job's key over that very request: an
// unsigned one, one signed with another key, or the AM's signed answer to
// an earlier request, replayed, is "not from the job's ApplicationMaster".
func TestStatusClientRefusesForgedAnswers(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	report := func(w http.ResponseWriter) {
		_ = json.NewEncoder(w).Encode(contract.StatusReport{AppID: "application_1_0001", Job: &contract.JobInfo{Command: "python train.py"}})
	}
	real := httptest.NewServer(fakeAM(t, key, report))
	defer real.Close()
	w := newStatusWatcher(key)
	defer w.close()
	w.url = real.URL + contract.StatusPath
	for i := 0; i < 3; i++ { // a fresh nonce each time
		rep, err := w.fetch(context.Background())
		require.NoError(t, err)
		require.Equal(t, "python train.py", rep.Job.Command)
	}

	// An earlier answer of the real AM, with its signature.
	req, err := http.NewRequest(http.MethodGet, real.URL+contract.StatusPath, nil)
	require.NoError(t, err)
	r, err := reqsign.NewRequest(contract.StatusRequestPurpose, http.MethodGet, contract.StatusPath, "application_1_0001", time.Now())
	require.NoError(t, err)
	r.Sign(contract.StatusSigningKey(key), nil, req.Header)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	old, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	oldSig := resp.Header.Get(reqsign.HeaderSignature)
	require.NotEmpty(t, oldSig)

	for name, forge := range map[string]http.Handler{
		"unsigned": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { report(w) }),
		"another key": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			report(rec)
			other := contract.StatusSigningKey([]byte("another job's key, just as long!"))
			w.Header().Set(reqsign.HeaderSignature, reqsign.SignResponse(other, contract.StatusAnswerPurpose, r.Header.Get(reqsign.HeaderSignature), http.StatusOK, rec.Body.Bytes()))
			_, _ = w.Write(rec.Body.Bytes())
		}),
		"an earlier answer replayed": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set(reqsign.HeaderSignature, oldSig)
			_, _ = w.Write(old)
		}),
	} {
		srv := httptest.NewServer(forge)
		w.url = srv.URL + contract.StatusPath
		rep, err := w.fetch(context.Background())
		srv.Close()
		require.ErrorIs(t, err, ErrNotTheAM, name)
		require.Nil(t, rep, name)
	}
}

func TestShortCause(t *testing.T) {
	require.Equal(t, "connection refused", shortCause(fmt.Errorf("dial: %w", syscall.ECONNREFUSED)))
	require.Equal(t, "no answer in time", shortCause(fmt.Errorf("x: %w", context.DeadlineExceeded)))
}

// One poll that saw worker:0 launch, register and end, and worker:1 launch:
// each line carries the counts right after its change.
func TestTaskChangeCountsAreThoseAtTheEvent(t *testing.T) {
	zero := int32(0)
	prev := &contract.StatusReport{Counts: contract.TaskCounts{Total: 2}, Tasks: []contract.TaskReport{{Task: "worker:0"}, {Task: "worker:1"}}}
	cur := &contract.StatusReport{Counts: contract.TaskCounts{Total: 2, Allocated: 2, Registered: 1, Running: 1, Ended: 1}, Tasks: []contract.TaskReport{
		{Task: "worker:0", ContainerID: "c2", Host: "h", Port: 1, ExitCode: &zero},
		{Task: "worker:1", ContainerID: "c3"},
	}}
	var got []string
	for _, ev := range taskChanges(prev, cur) {
		n := ev.Counts
		got = append(got, fmt.Sprintf("%s %s %d/%d alloc %d reg %d run %d ended", ev.Task.Task, ev.TaskChange, n.Allocated, n.Total, n.Registered, n.Running, n.Ended))
	}
	require.Equal(t, []string{
		"worker:0 launched 1/2 alloc 0 reg 1 run 0 ended",
		"worker:1 launched 2/2 alloc 0 reg 2 run 0 ended",
		"worker:0 registered 2/2 alloc 1 reg 2 run 0 ended",
		"worker:0 ended 2/2 alloc 1 reg 1 run 1 ended",
	}, got)
}

// A restart: the task back to pending still names the container it failed
// in, which is no new start; its next container is, and the restart's
// cause is told once, when the page first lists it.
func TestTaskChangesAcrossARestart(t *testing.T) {
	running := &contract.StatusReport{Tasks: []contract.TaskReport{{Task: "worker:0", State: "running", ContainerID: "c1", Host: "h", Port: 1}}}
	cause := "restart 1 after worker:0 (container c1 on n:1) failed: exit code 7"
	pending := &contract.StatusReport{RestartCauses: []string{cause}, Tasks: []contract.TaskReport{{Task: "worker:0", State: "pending", Attempt: 1, ContainerID: "c1"}}}
	again := &contract.StatusReport{RestartCauses: []string{cause}, Tasks: []contract.TaskReport{{Task: "worker:0", State: "running", Attempt: 1, ContainerID: "c5", Host: "h", Port: 2}}}
	require.Empty(t, taskChanges(running, pending), "c1 is the failed container, not a start")
	require.Equal(t, []string{cause}, newRestarts(running, pending))
	var got []string
	for _, ev := range taskChanges(pending, again) {
		got = append(got, ev.Task.Task+" "+ev.TaskChange+" "+ev.Task.ContainerID)
	}
	require.Equal(t, []string{"worker:0 launched c5", "worker:0 registered c5"}, got)
	require.Empty(t, newRestarts(pending, again), "told once")
	require.Equal(t, []string{cause}, newRestarts(nil, again), "a client that comes late hears it")
}

// Each restart is told once, also when a later AM attempt's page lists the
// earlier attempt's again; a wait is told at once, then not again within
// waitingEvery.
func TestStatusWatcherTellsRestartsAndWaitsOnce(t *testing.T) {
	var rep atomic.Pointer[contract.StatusReport]
	rep.Store(&contract.StatusReport{AppID: "application_1_0001", RestartCauses: []string{"restart 1 after a"}, Waiting: []string{"waiting for 1 worker container"}})
	key := []byte("0123456789abcdef0123456789abcdef")
	srv := httptest.NewServer(fakeAM(t, key, func(w http.ResponseWriter) { _ = json.NewEncoder(w).Encode(rep.Load()) }))
	defer srv.Close()
	w := newStatusWatcher(key)
	w.url = srv.URL + contract.StatusPath
	var told []string
	on := func(ev Event) {
		if ev.Restart != "" {
			told = append(told, ev.Restart)
		}
		if ev.Waiting != "" {
			told = append(told, ev.Waiting)
		}
	}
	ctx := context.Background()
	w.poll(ctx, "application_1_0001", on)
	w.poll(ctx, "application_1_0001", on)
	w.last = nil // a new AM attempt (Wait does this)
	rep.Store(&contract.StatusReport{AppID: "application_1_0001", RestartCauses: []string{"restart 1 after a", "restart 2 after b"}})
	w.poll(ctx, "application_1_0001", on)
	require.Equal(t, []string{"restart 1 after a", "waiting for 1 worker container", "restart 2 after b"}, told)
}

// A container flagged near its memory limit is told once, however many
// polls still flag it; the task's next container is told again.
func TestStatusWatcherTellsNearMemoryOncePerContainer(t *testing.T) {
	task := func(container string, near bool) contract.TaskReport {
		return contract.TaskReport{Task: "worker:0", Type: "worker", ContainerID: container, Node: "n1:45454",
			ProcessSample: &contract.ProcessSample{RSSBytes: 240 << 20, PeakRSSBytes: 245 << 20}, MemoryLimitBytes: 256 << 20, NearMemoryLimit: near}
	}
	var rep atomic.Pointer[contract.StatusReport]
	rep.Store(&contract.StatusReport{AppID: "application_1_0001", Tasks: []contract.TaskReport{task("c1", false)}})
	key := []byte("0123456789abcdef0123456789abcdef")
	srv := httptest.NewServer(fakeAM(t, key, func(w http.ResponseWriter) { _ = json.NewEncoder(w).Encode(rep.Load()) }))
	defer srv.Close()
	w := newStatusWatcher(key)
	w.url = srv.URL + contract.StatusPath
	var told []string
	on := func(ev Event) {
		if ev.NearMemory != "" {
			told = append(told, ev.NearMemory)
		}
	}
	ctx := context.Background()
	w.poll(ctx, "application_1_0001", on)
	require.Empty(t, told)
	rep.Store(&contract.StatusReport{AppID: "application_1_0001", Tasks: []contract.TaskReport{task("c1", true)}})
	w.poll(ctx, "application_1_0001", on)
	w.poll(ctx, "application_1_0001", on)
	rep.Store(&contract.StatusReport{AppID: "application_1_0001", Tasks: []contract.TaskReport{task("c2", true)}})
	w.poll(ctx, "application_1_0001", on)
	require.Equal(t, []string{
		"worker:0 (container c1 on n1:45454) is near its memory limit: peak RSS 245 MiB of the container's 256 MiB; YARN kills the container beyond it (give --worker more memory)",
		"worker:0 (container c2 on n1:45454) is near its memory limit: peak RSS 245 MiB of the container's 256 MiB; YARN kills the container beyond it (give --worker more memory)",
	}, told)
}

// TestStatusWatcherTellsAnotherVersionOnce: an AM of another tfyarn than
// the client (a Go program shipping another tfyarn as Job.Binary) is told
// in one notice, once; an AM of the same version or one that does not say
// is not.
func TestStatusWatcherTellsAnotherVersionOnce(t *testing.T) {
	var rep atomic.Pointer[contract.StatusReport]
	rep.Store(&contract.StatusReport{AppID: "application_1_0001", TfyarnVersion: "v1.2.0"})
	key := []byte("0123456789abcdef0123456789abcdef")
	srv := httptest.NewServer(fakeAM(t, key, func(w http.ResponseWriter) { _ = json.NewEncoder(w).Encode(rep.Load()) }))
	defer srv.Close()
	poll := func(client string, polls int) []string {
		w := newStatusWatcher(key)
		w.url, w.version = srv.URL+contract.StatusPath, client
		var told []string
		for range polls {
			w.poll(context.Background(), "application_1_0001", func(ev Event) {
				if ev.Notice != "" {
					told = append(told, ev.Notice)
				}
			})
			w.last = nil // as after a new AM attempt: still told once
		}
		return told
	}
	told := poll("v1.3.0", 3)
	require.Len(t, told, 1)
	require.True(t, strings.HasPrefix(told[0], "the job's ApplicationMaster is tfyarn v1.2.0 (this client is v1.3.0): "), told[0])
	require.Empty(t, poll("v1.2.0", 2))
	rep.Store(&contract.StatusReport{AppID: "application_1_0001"})
	require.Empty(t, poll("v1.3.0", 2))
}

// watchForEnd hands over the AM's final report as soon as the AM answers
// its held request, and asks an AM that answers at once (an older one) no
// more often than the poll interval.
func TestWatchForEndLearnsTheEndAtOnce(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	ended := make(chan struct{})
	var asked atomic.Int32
	srv := httptest.NewServer(fakeAM(t, key, func(w http.ResponseWriter) {
		asked.Add(1)
		select {
		case <-ended:
		case <-time.After(contract.StatusWaitMax):
		}
		select {
		case <-ended:
			_ = json.NewEncoder(w).Encode(contract.StatusReport{AppID: "application_1_0001", Final: true, FinalStatus: "SUCCEEDED"})
		default:
			_ = json.NewEncoder(w).Encode(contract.StatusReport{AppID: "application_1_0001"})
		}
	}))
	defer srv.Close()
	w := newStatusWatcher(key)
	w.url, w.appID = srv.URL+contract.StatusPath, "application_1_0001"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := w.watchForEnd(ctx, time.Hour)
	time.Sleep(300 * time.Millisecond)
	closedAt := time.Now()
	close(ended)
	select {
	case rep := <-got:
		require.True(t, rep.Final)
		require.Less(t, time.Since(closedAt), 500*time.Millisecond, "the end is learnt at once, not at the next poll")
	case <-time.After(5 * time.Second):
		t.Fatal("the final report never came")
	}
	require.Equal(t, int32(1), asked.Load(), "one held request")

	// An AM that answers at once is asked every interval, never faster.
	asked.Store(0)
	quick := httptest.NewServer(fakeAM(t, key, func(w http.ResponseWriter) {
		asked.Add(1)
		_ = json.NewEncoder(w).Encode(contract.StatusReport{AppID: "application_1_0001"})
	}))
	defer quick.Close()
	w2 := newStatusWatcher(key)
	w2.url, w2.appID = quick.URL+contract.StatusPath, "application_1_0001"
	w2.watchForEnd(ctx, 200*time.Millisecond)
	time.Sleep(time.Second)
	cancel()
	require.LessOrEqual(t, asked.Load(), int32(6))
	require.GreaterOrEqual(t, asked.Load(), int32(3))
}

// A restart and the new container it brought, both seen in one report, are
// told in the order they happened: the restart first.
func TestRestartToldBeforeTheNewContainers(t *testing.T) {
	running := &contract.StatusReport{AppID: "application_1_0001", Tasks: []contract.TaskReport{{Task: "worker:0", State: "running", ContainerID: "c1", Host: "h", Port: 1}}}
	cause := "restart 1 after worker:0 (container c1 on n:1) failed: exit code 7"
	again := &contract.StatusReport{AppID: "application_1_0001", RestartCauses: []string{cause}, Tasks: []contract.TaskReport{{Task: "worker:0", State: "running", Attempt: 1, ContainerID: "c5", Host: "h", Port: 2}}}
	w := newStatusWatcher(nil)
	var got []string
	record := orderOf(&got)
	w.apply("application_1_0001", running, record)
	got = nil
	w.apply("application_1_0001", again, record)
	require.Equal(t, []string{"restart", "launched c5", "registered c5"}, got)
}

// A task that failed at once, its launch never seen: its container is told
// as started before the restart its failure caused, never after it (a
// CI-shaped run's TestE2ERestarts/restarted read it so under load).
func TestFailureUnseenToldBeforeItsRestart(t *testing.T) {
	exit1, exit143 := int32(1), int32(143)
	cause := "restart 1 after worker:0 (container c2 on n:1) failed: exit code 1"
	first := &contract.StatusReport{AppID: "application_1_0001", Tasks: []contract.TaskReport{
		{Task: "chief:0", State: "running", ContainerID: "c1"},
		{Task: "worker:0", State: "pending"},
	}}
	stopping := &contract.StatusReport{AppID: "application_1_0001", RestartCauses: []string{cause}, Tasks: []contract.TaskReport{
		{Task: "chief:0", State: "stopped", ContainerID: "c1", ExitCode: &exit143},
		{Task: "worker:0", State: "failed", ContainerID: "c2", ExitCode: &exit1},
	}}
	requeued := &contract.StatusReport{AppID: "application_1_0001", RestartCauses: []string{cause}, Tasks: []contract.TaskReport{
		{Task: "chief:0", State: "running", Attempt: 1, ContainerID: "c3"},
		{Task: "worker:0", State: "pending", Attempt: 1, ContainerID: "c2"},
	}}
	for _, tc := range []struct {
		name       string
		seen, next *contract.StatusReport
		want       []string
	}{
		{"in one report", first, stopping, []string{"launched c2", "ended c1", "ended c2", "restart"}},
		{"with the new attempts", first, requeued, []string{"restart", "launched c3"}},
		{"as the first report", nil, stopping, []string{"launched c1", "launched c2", "ended c1", "ended c2", "restart"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newStatusWatcher(nil)
			var got []string
			record := orderOf(&got)
			if tc.seen != nil {
				w.apply("application_1_0001", tc.seen, nil)
			}
			w.apply("application_1_0001", tc.next, record)
			require.Equal(t, tc.want, got)
		})
	}
}

// orderOf records the order of the restarts ("restart") and task changes
// ("launched c5") it is told into got.
func orderOf(got *[]string) func(Event) {
	return func(ev Event) {
		switch {
		case ev.Restart != "":
			*got = append(*got, "restart")
		case ev.Task != nil:
			*got = append(*got, ev.TaskChange+" "+ev.Task.ContainerID)
		}
	}
}
