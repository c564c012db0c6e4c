package rendezvous

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/syncbuf"
	"github.com/tfyarn/tfyarn/taskspec"
)

func testSecret(t testing.TB) []byte {
	s, err := NewSecret()
	require.NoError(t, err)
	return s
}

type testServer struct {
	addr string
	logs *syncbuf.Buffer
}

// startServer serves h on a loopback port until the test ends.
func startServer(t testing.TB, secret []byte, h Handler, opts ...Option) testServer {
	t.Helper()
	logs := &syncbuf.Buffer{}
	opts = append([]Option{WithLogger(slog.New(slog.NewTextHandler(logs, nil)))}, opts...)
	srv, err := NewServer(secret, h, opts...)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return testServer{addr: ln.Addr().String(), logs: logs}
}

func newBoard(t testing.TB, timeout time.Duration, groups ...taskspec.TaskGroup) *Board {
	t.Helper()
	b, err := NewBoard(BoardConfig{Groups: groups, RegistrationTimeout: timeout})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	return b
}

func group(typ taskspec.TaskType, n int) taskspec.TaskGroup {
	return taskspec.TaskGroup{Type: typ, Instances: n}
}

func task(typ taskspec.TaskType, i int) taskspec.TaskID { return taskspec.TaskID{Type: typ, Index: i} }

func reg(typ taskspec.TaskType, i int, port int) Registration {
	return Registration{Task: task(typ, i), Host: "node1.example.com", Port: port, ContainerID: "container_1_0001_01_00000" + string(rune('1'+i%9))}
}

// testContainer is the container a signed request speaks for when its
// body names none.
const testContainer = "container_1_0001_01_000001"

// testReq is a request signed as a launcher would sign it, and what
// checking the answer takes.
type testReq struct {
	*http.Request
	keys keys
	sent signed
}

// signedRequest builds a request as the client would, sealed and signed
// with the key secret gives the container the body names (container_id),
// or testContainer.
func signedRequest(t testing.TB, secret []byte, method, url string, body []byte) *testReq {
	t.Helper()
	var named struct {
		ContainerID string `json:"container_id"`
	}
	container := testContainer
	if json.Unmarshal(body, &named) == nil && named.ContainerID != "" {
		container = named.ContainerID
	}
	return signedRequestAs(t, secret, container, method, url, body)
}

func signedRequestAs(t testing.TB, secret []byte, container, method, url string, body []byte) *testReq {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	require.NoError(t, err)
	k, err := newKeys(ContainerKey(secret, container))
	require.NoError(t, err)
	wire, sent, err := k.sign(req, container, body, time.Now())
	require.NoError(t, err)
	if wire != nil {
		req.Body = io.NopCloser(bytes.NewReader(wire))
		req.ContentLength = int64(len(wire))
	}
	return &testReq{Request: req, keys: k, sent: sent}
}

// send does req with a plain client (no retries) and returns status and
// body as they came.
func send(t testing.TB, req *http.Request) (int, string) {
	t.Helper()
	status, _, body := sendRaw(t, req)
	return status, string(body)
}

func sendRaw(t testing.TB, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, resp.Header, b.Bytes()
}

// sendSigned does r and returns the status and the body: opened when the
// answer is signed for r (signed says so), as it came otherwise.
func sendSigned(t testing.TB, r *testReq) (status int, body string, signed bool) {
	t.Helper()
	status, h, wire := sendRaw(t, r.Request)
	plain, err := r.keys.checkResponse(r.sent, status, h, wire)
	if err != nil {
		return status, string(wire), false
	}
	return status, string(plain), true
}

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// watchedBoard is a Board that signals each long poll reaching it, so a
// test can act once a launcher is waiting instead of sleeping.
type watchedBoard struct {
	*Board
	stopWaits chan struct{} // one per WaitStop call
	credWaits chan struct{} // one per WaitCredentials call
}

func watch(b *Board) *watchedBoard {
	return &watchedBoard{Board: b, stopWaits: make(chan struct{}, 1000), credWaits: make(chan struct{}, 1000)}
}

func (w *watchedBoard) WaitStop(ctx context.Context, task taskspec.TaskID, containerID string) (StopOrder, error) {
	signal(w.stopWaits)
	return w.Board.WaitStop(ctx, task, containerID)
}

func (w *watchedBoard) WaitCredentials(ctx context.Context, task taskspec.TaskID, after uint64) (CredentialsUpdate, error) {
	signal(w.credWaits)
	return w.Board.WaitCredentials(ctx, task, after)
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// await receives n signals from ch, failing the test after d.
func await(t testing.TB, ch <-chan struct{}, n int, d time.Duration, what string) {
	t.Helper()
	timeout := time.After(d)
	for i := 0; i < n; i++ {
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("%s: got %d of %d within %s", what, i, n, d)
		}
	}
}
