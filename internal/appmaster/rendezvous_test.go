package appmaster

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/reqsign"
	"github.com/tfyarn/tfyarn/taskspec"
)

func TestTaskRendezvous(t *testing.T) {
	chief, _ := taskspec.ParseSpec(taskspec.Chief, "1c")
	worker, _ := taskspec.ParseSpec(taskspec.Worker, "1c")
	job := taskspec.Job{Tasks: []taskspec.TaskGroup{chief, worker}, Command: "true"}
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	key, err := contract.NewStatusKey()
	require.NoError(t, err)
	rv, err := StartRendezvous(RendezvousConfig{AppID: "application_1_0001", Job: job, Secret: secret, Host: "127.0.0.1", Listen: "127.0.0.1:0",
		Web: WebAccess{StatusKey: key, ProxyHosts: []string{"127.0.0.1:8088"}}})
	require.NoError(t, err)
	require.Equal(t, "http://"+rv.Address()+"/proxied/"+contract.WebPathToken(key)+"/", rv.TrackingURL())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	chief0 := taskspec.TaskID{Type: taskspec.Chief}
	rv.Assign(chief0, "container_1_0001_01_000002")
	rv.Assign(worker0, "container_1_0001_01_000003")
	c := launcherClient(t, rv, secret, "container_1_0001_01_000002")
	c9 := launcherClient(t, rv, secret, "container_1_0001_01_000009")
	c3 := launcherClient(t, rv, secret, "container_1_0001_01_000003")
	require.NoError(t, c.Register(ctx, rendezvous.Registration{Task: chief0, Host: "127.0.0.1", Port: 2222, ContainerID: "container_1_0001_01_000002"}))
	require.Error(t, c9.Register(ctx, rendezvous.Registration{Task: worker0, Host: "127.0.0.1", Port: 2223, ContainerID: "container_1_0001_01_000009"}),
		"only the assigned container may register")
	require.NoError(t, c3.Register(ctx, rendezvous.Registration{Task: worker0, Host: "127.0.0.1", Port: 2223, ContainerID: "container_1_0001_01_000003"}))
	spec, err := c3.WaitSpec(ctx, worker0)
	require.NoError(t, err)
	require.Equal(t, []string{"127.0.0.1:2223"}, spec[taskspec.Worker])
	require.Equal(t, []core.Event{
		core.TaskRegistered{Task: chief0, Host: "127.0.0.1", Port: 2222},
		core.TaskRegistered{Task: worker0, Host: "127.0.0.1", Port: 2223},
	}, rv.Drain())

	require.NoError(t, c.ReportExit(ctx, rendezvous.ExitReport{Task: chief0, ContainerID: "container_1_0001_01_000002", ExitCode: 1, StderrTail: []string{"boom"}}))
	require.Equal(t, []core.Event{core.ContainerCompleted{ID: "container_1_0001_01_000002", ExitStatus: 1, Diagnostics: "the program exited with code 1", ByLauncher: true}}, rv.Drain())
	require.Equal(t, []string{"boom"}, rv.StderrTail(chief0, "container_1_0001_01_000002"))

	// The status page: the tasks, their addresses and exits, never the secret.
	m, err := core.New(core.Config{Job: job})
	require.NoError(t, err)
	rv.Observe(Snapshot{Tasks: m.Tasks()})
	body := getWithKey(t, "http://"+rv.Address()+contract.StatusPath, key)
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
		require.NotContains(t, page, contract.WebPathToken(key))
		require.NotContains(t, page, hex.EncodeToString(contract.StatusSigningKey(key)))
	}

	rv.Observe(Snapshot{Tasks: m.Tasks(), Finish: &core.Finish{Status: core.Failed, Diagnostics: "chief:0 failed"}})
	done := make(chan struct{})
	go func() { rv.Close(5 * time.Second); close(done) }()
	select {
	case <-rv.page.lingering: // Close waits for a watching client's last fetch
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not linger for the watching client")
	}
	require.NoError(t, json.Unmarshal([]byte(getWithKey(t, "http://"+rv.Address()+contract.StatusPath, key)), &rep))
	require.True(t, rep.Final)
	require.Equal(t, "FAILED", rep.FinalStatus)
	select {
	case <-done: // the final page was fetched: no need to linger
	case <-time.After(3 * time.Second):
		t.Fatal("Close lingered after the final page was fetched")
	}
}

// launcherClient is the rendezvous client of the launcher in container,
// holding the key the AM gives that container.
func launcherClient(t *testing.T, rv *TaskRendezvous, secret []byte, container string) *rendezvous.Client {
	t.Helper()
	c, err := rendezvous.NewClient(rv.Address(), container, rendezvous.ContainerKey(secret, container), rendezvous.WithLongPoll(time.Second))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func get(t *testing.T, url string) string { return getWithKey(t, url, nil) }

// getWithKey GETs url, with a request signed with the status key when key
// is not nil, whose answer must be signed.
func getWithKey(t *testing.T, url string, key []byte) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	var sig string
	if key != nil {
		sig = signStatusRequest(t, key, req.URL.RequestURI(), req.Header)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if key != nil {
		require.NoError(t, reqsign.CheckResponse(contract.StatusSigningKey(key), contract.StatusAnswerPurpose, sig, resp.StatusCode, resp.Header, b))
	}
	return string(b)
}

// signStatusRequest sets in h the signature of a fresh GET of target as
// the owner's client signs it, and returns it.
func signStatusRequest(t *testing.T, key []byte, target string, h http.Header) string {
	t.Helper()
	r, err := reqsign.NewRequest(contract.StatusRequestPurpose, http.MethodGet, target, "application_1_0001", time.Now())
	require.NoError(t, err)
	return r.Sign(contract.StatusSigningKey(key), nil, h)
}

// failingListener's Accept fails for good, as a listener does when the
// process runs out of file descriptors for a while and then worse.
type failingListener struct{ net.Listener }

func (failingListener) Accept() (net.Conn, error) {
	return nil, errors.New("accept tcp: simulated permanent failure")
}

// TestRendezvousServeFailure: the AM's rendezvous server ceasing to serve is
// not silent: the loop is woken, Drain reports RendezvousFailed once with
// the server's error, and the line is logged.
func TestRendezvousServeFailure(t *testing.T) {
	chief, _ := taskspec.ParseSpec(taskspec.Chief, "1c")
	job := taskspec.Job{Tasks: []taskspec.TaskGroup{chief}, Command: "true"}
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	logged := make(chan string, 10)
	rv, err := StartRendezvous(RendezvousConfig{
		AppID: "application_1_0001", Job: job, Secret: secret, Host: "127.0.0.1", Listen: "127.0.0.1:0",
		Logf: func(format string, args ...any) { logged <- fmt.Sprintf(format, args...) },
		listen: func(network, address string) (net.Listener, error) {
			ln, err := net.Listen(network, address)
			return failingListener{ln}, err
		},
	})
	require.NoError(t, err)
	defer rv.Close(0)

	select {
	case <-rv.Notify():
	case <-time.After(10 * time.Second):
		t.Fatal("a failed Serve did not wake the loop")
	}
	evs := rv.Drain()
	require.Len(t, evs, 1)
	failed, ok := evs[0].(core.RendezvousFailed)
	require.True(t, ok, "%#v", evs[0])
	require.Contains(t, failed.Reason, "rendezvous server at "+rv.Address()+" stopped serving")
	require.Contains(t, failed.Reason, "simulated permanent failure")
	require.Contains(t, failed.Reason, "no task can register")
	require.Empty(t, rv.Drain(), "reported once")
	require.Contains(t, <-logged, "the rendezvous server stopped: accept tcp: simulated permanent failure")

	// The machine fails the job with that reason.
	m, err := core.New(core.Config{Job: job})
	require.NoError(t, err)
	m.Step(core.Registered{})
	m.Step(failed)
	rd := m.Ready()
	require.NotNil(t, rd.Finish)
	require.Equal(t, core.Failed, rd.Finish.Status)
	require.Contains(t, rd.Finish.Diagnostics, "rendezvous failed: the AM's rendezvous server at")
}

// TestRendezvousCloseIsNotAFailure: the normal shutdown reports nothing.
func TestRendezvousCloseIsNotAFailure(t *testing.T) {
	chief, _ := taskspec.ParseSpec(taskspec.Chief, "1c")
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	rv, err := StartRendezvous(RendezvousConfig{AppID: "application_1_0001", Job: taskspec.Job{Tasks: []taskspec.TaskGroup{chief}, Command: "true"},
		Secret: secret, Host: "127.0.0.1", Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	rv.Close(0)
	require.Empty(t, rv.Drain())
}

// TestRendezvousBoundsStrangers: the AM's listener keeps at most
// rendezvous.MaxUnauthenticatedConns connections of peers that signed
// nothing (the oldest closed for each new one), and a launcher still
// registers, waits and reports through such a crowd (issue 18.3).
func TestRendezvousBoundsStrangers(t *testing.T) {
	worker, _ := taskspec.ParseSpec(taskspec.Worker, "1c")
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	key, err := contract.NewStatusKey()
	require.NoError(t, err)
	rv, err := StartRendezvous(RendezvousConfig{AppID: "application_1_0001", Job: taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Command: "true"},
		Secret: secret, Host: "127.0.0.1", Listen: "127.0.0.1:0", Web: WebAccess{StatusKey: key}})
	require.NoError(t, err)
	defer rv.Close(0)

	// The owner's status client, on one kept-alive connection.
	owner, err := net.DialTimeout("tcp", rv.Address(), 5*time.Second)
	require.NoError(t, err)
	defer owner.Close()
	ownerReader := bufio.NewReader(owner)
	askStatus := func() int {
		h := http.Header{}
		signStatusRequest(t, key, contract.StatusPath, h)
		var head strings.Builder
		require.NoError(t, h.Write(&head))
		_, err := io.WriteString(owner, "GET "+contract.StatusPath+" HTTP/1.1\r\nHost: am\r\n"+head.String()+"\r\n")
		require.NoError(t, err)
		require.NoError(t, owner.SetReadDeadline(time.Now().Add(5*time.Second)))
		resp, err := http.ReadResponse(ownerReader, nil)
		require.NoError(t, err, "the owner's connection still answers")
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, askStatus())

	require.Equal(t, 128, rendezvous.MaxUnauthenticatedConns, "README's Security of the rendezvous says 128")
	const crowd = 2 * rendezvous.MaxUnauthenticatedConns
	idle := make([]net.Conn, crowd)
	for i := range idle {
		c, err := net.DialTimeout("tcp", rv.Address(), 5*time.Second)
		require.NoError(t, err)
		defer c.Close()
		_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: am\r\n") // headers never finished
		require.NoError(t, err)
		idle[i] = c
	}
	lastDial := time.Now()
	// Every stranger is read at once, until 3 s after the last one came: the AM closes the oldest
	// as each newcomer arrives, and the others only once their headers run out of time
	// (rendezvous.HTTPServer: 5 s), so what is closed by then was made room for. (Reading them one
	// after another took over 5 s under a full suite's load: the header timeout had closed them
	// all, the newest too.)
	closed := make([]bool, crowd)
	var readers sync.WaitGroup
	for i, conn := range idle {
		readers.Add(1)
		go func() {
			defer readers.Done()
			_ = conn.SetReadDeadline(lastDial.Add(3 * time.Second))
			_, err := conn.Read(make([]byte, 1))
			closed[i] = errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
		}()
	}
	// A launcher registers while the strangers hold their places.
	w0 := taskspec.TaskID{Type: taskspec.Worker}
	rv.Assign(w0, "container_1_0001_01_000002")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := launcherClient(t, rv, secret, "container_1_0001_01_000002")
	require.NoError(t, c.Register(ctx, rendezvous.Registration{Task: w0, Host: "127.0.0.1", Port: 2222, ContainerID: "container_1_0001_01_000002"}))
	_, err = c.WaitSpec(ctx, w0)
	require.NoError(t, err)
	readers.Wait()
	n := 0
	for _, c := range closed {
		if c {
			n++
		}
	}
	require.GreaterOrEqual(t, n, crowd-rendezvous.MaxUnauthenticatedConns, "strangers' connections the AM closed")
	require.Equal(t, make([]bool, 10), closed[crowd-10:], "the newest strangers stay: the oldest made room")
	require.NoError(t, c.ReportExit(ctx, rendezvous.ExitReport{Task: w0, ContainerID: "container_1_0001_01_000002"}))
	require.Equal(t, http.StatusOK, askStatus(), "the owner's status connection outlived the crowd")
}

// TestRendezvousStrangerBoundGrowsWithTheJob: a job of more tasks than
// rendezvous.MaxUnauthenticatedConns keeps one place per task for
// connections that signed nothing yet, so its launchers, all connecting
// at once, are not closed before their first signed request.
func TestRendezvousStrangerBoundGrowsWithTheJob(t *testing.T) {
	const tasks = 3 * rendezvous.MaxUnauthenticatedConns
	workers, err := taskspec.ParseSpec(taskspec.Worker, fmt.Sprintf("%dx1c", tasks))
	require.NoError(t, err)
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	rv, err := StartRendezvous(RendezvousConfig{AppID: "application_1_0001", Job: taskspec.Job{Tasks: []taskspec.TaskGroup{workers}, Command: "true"},
		Secret: secret, Host: "127.0.0.1", Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	defer rv.Close(0)
	require.Equal(t, tasks, rendezvous.StrangerBound(tasks))
	require.Equal(t, rendezvous.MaxUnauthenticatedConns, rendezvous.StrangerBound(2))
	conns := make([]net.Conn, tasks)
	for i := range conns {
		c, err := net.DialTimeout("tcp", rv.Address(), 5*time.Second)
		require.NoError(t, err)
		defer c.Close()
		_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: am\r\n") // headers not finished yet
		require.NoError(t, err)
		conns[i] = c
	}
	// The AM closes none of them before their headers run out of time
	// (5 s): each has its place. Read until 2 s after the last dial.
	deadline := time.Now().Add(2 * time.Second)
	closed := make([]bool, tasks)
	var readers sync.WaitGroup
	for i, c := range conns {
		readers.Add(1)
		go func() {
			defer readers.Done()
			_ = c.SetReadDeadline(deadline)
			_, err := c.Read(make([]byte, 1))
			closed[i] = errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
		}()
	}
	readers.Wait()
	require.Equal(t, make([]bool, tasks), closed, "connections the AM closed among a job's worth of them")
}

// The machine's warnings reach the warned container's launcher one after
// another, each with its kind: idle GPUs, then a preemption.
func TestTaskRendezvousWarns(t *testing.T) {
	worker, _ := taskspec.ParseSpec(taskspec.Worker, "1c")
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	rv, err := StartRendezvous(RendezvousConfig{AppID: "application_1_0001", Job: taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Command: "true"},
		Secret: secret, Host: "127.0.0.1", Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	defer rv.Close(0)
	const id = "container_1_0001_01_000002"
	rv.Assign(worker0, id)
	ends := time.UnixMilli(time.Now().Add(time.Minute).UnixMilli())
	rv.Warn(core.Warning{Kind: core.WarnGPUIdle, Task: worker0, Container: core.Container{ID: id}, Deadline: ends, Reason: "GPUs idle"})
	rv.Warn(core.Warning{Kind: core.WarnPreemption, Task: worker0, Container: core.Container{ID: id}, Deadline: ends, Reason: "preempted"})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := launcherClient(t, rv, secret, id)
	idle, err := c.WaitNotice(ctx, worker0, id, 0)
	require.NoError(t, err)
	require.Equal(t, contract.WarningGPUIdle, idle.Kind)
	require.Equal(t, "GPUs idle", idle.Reason)
	require.True(t, idle.Deadline.Equal(ends))
	pre, err := c.WaitNotice(ctx, worker0, id, idle.Seq)
	require.NoError(t, err)
	require.Equal(t, contract.WarningPreemption, pre.Kind)
	require.Equal(t, "preempted", pre.Reason)
}
