package rendezvous

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/reqsign"

	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Issue 21.8: every launcher call is bound to the container whose key
// signs it and to the task that container was given. A launcher (which
// holds only its own container's key) cannot get a healthy task blamed,
// stopped, or read another's spec or credentials.
func TestCallsAreBoundToTheContainerAndTask(t *testing.T) {
	secret := testSecret(t)
	b, err := NewBoard(BoardConfig{Groups: []taskspec.TaskGroup{group(taskspec.Worker, 2)}, RequireAssignment: true})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	srv := startServer(t, secret, b)
	w0, w1 := task(taskspec.Worker, 0), task(taskspec.Worker, 1)
	const cA, cB, cZ = "container_1_0001_01_000002", "container_1_0001_01_000003", "container_1_0001_01_000009"
	b.Assign(w0, cA)
	b.Assign(w1, cB)
	ctx := ctxTimeout(t, 20*time.Second)
	a := newTestClient(t, srv.addr, secret, cA, WithLongPoll(100*time.Millisecond))
	bc := newTestClient(t, srv.addr, secret, cB, WithLongPoll(100*time.Millisecond))
	require.NoError(t, a.Register(ctx, Registration{Task: w0, Host: "h", Port: 1, ContainerID: cA}))
	require.NoError(t, bc.Register(ctx, Registration{Task: w1, Host: "h", Port: 2, ContainerID: cB}))

	// A speaks for worker:1, naming B's container or its own: refused.
	for _, e := range []ExitReport{{Task: w1, ContainerID: cB, ExitCode: 1}, {Task: w1, ContainerID: cA, ExitCode: 1}} {
		err := a.ReportExit(ctx, e)
		require.ErrorIs(t, err, ErrForbidden, "%+v", e)
		var se *StatusError
		require.ErrorAs(t, err, &se)
		require.Equal(t, http.StatusForbidden, se.Status)
	}
	_, err = a.WaitSpec(ctx, w1)
	require.ErrorIs(t, err, ErrForbidden)
	_, err = a.WaitStop(ctx, w1, cB)
	require.ErrorIs(t, err, ErrForbidden)
	_, err = a.WaitStop(ctx, w0, cB)
	require.ErrorIs(t, err, ErrForbidden, "its own task, another container")
	_, _, err = a.WaitCredentials(ctx, w1, 0)
	require.ErrorIs(t, err, ErrForbidden)
	require.ErrorIs(t, a.Register(ctx, Registration{Task: w1, Host: "h", Port: 3, ContainerID: cA}), ErrForbidden)

	// A's key under B's name does not verify; a container the AM never
	// gave a task may act as none.
	forged, err := NewClient(srv.addr, cB, ContainerKey(secret, cA))
	require.NoError(t, err)
	t.Cleanup(forged.Close)
	require.ErrorIs(t, forged.ReportExit(ctxTimeout(t, 3*time.Second), ExitReport{Task: w1, ContainerID: cB, ExitCode: 1}), ErrUnauthorized, "no answer that verifies: retried until its deadline")
	z := newTestClient(t, srv.addr, secret, cZ)
	require.ErrorIs(t, z.ReportExit(ctx, ExitReport{Task: w1, ContainerID: cZ, ExitCode: 1}), ErrForbidden)

	_, blamed := b.Exit(w1)
	require.False(t, blamed, "no exit recorded for the healthy worker:1")
	for _, ev := range b.Drain() {
		_, exited := ev.(TaskExited)
		require.False(t, exited, "%#v", ev)
	}

	// Each speaks for itself; a task's former container still reports its
	// own end after the AM moved the task to a new one.
	require.NoError(t, bc.ReportExit(ctx, ExitReport{Task: w1, ContainerID: cB, ExitCode: 0}))
	const cB2 = "container_1_0001_01_000004"
	b.Assign(w1, cB2)
	require.NoError(t, bc.ReportExit(ctx, ExitReport{Task: w1, ContainerID: cB, ExitCode: 137}))
	require.NoError(t, a.ReportExit(ctx, ExitReport{Task: w0, ContainerID: cA, ExitCode: 0}))
	e, ok := b.Exit(w0)
	require.True(t, ok)
	require.Equal(t, cA, e.ContainerID)
}

// recorder is a TCP relay that keeps every byte either way.
type recorder struct {
	addr string
	mu   sync.Mutex
	seen bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen.Write(p)
}

func (r *recorder) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.seen.Bytes()...)
}

func record(t *testing.T, target string) *recorder {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	r := &recorder{addr: ln.Addr().String()}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			go func() { _, _ = io.Copy(io.MultiWriter(out, r), in); out.Close() }()
			go func() { _, _ = io.Copy(io.MultiWriter(in, r), out); in.Close() }()
		}
	}()
	return r
}

// Issue 18.3: refreshed tokens and stderr tails never cross the network
// in clear: every body is sealed with the container's key.
func TestBodiesAreSealedOnTheWire(t *testing.T) {
	secret := testSecret(t)
	b := newBoard(t, 0, group(taskspec.Worker, 1))
	srv := startServer(t, secret, b)
	wire := record(t, srv.addr)
	r := reg(taskspec.Worker, 0, 2222)
	c := newTestClient(t, wire.addr, secret, r.ContainerID)
	ctx := ctxTimeout(t, 10*time.Second)
	require.NoError(t, c.Register(ctx, r))

	const password, stderrLine = "hdfs-password-5f3e1a", "Traceback: the-stderr-line-9c2d"
	creds := security.NewCredentials()
	creds.AddToken("hdfs", security.Token{Identifier: []byte("id"), Password: []byte(password), Kind: security.KindHDFSDelegation, Service: "ha-hdfs:nn"})
	_, err := b.PublishCredentials(creds)
	require.NoError(t, err)
	_, got, err := c.WaitCredentials(ctx, r.Task, 0)
	require.NoError(t, err)
	tok, _ := got.Token("hdfs")
	require.Equal(t, password, string(tok.Password), "the launcher gets the token")
	require.NoError(t, c.ReportExit(ctx, ExitReport{Task: r.Task, ContainerID: r.ContainerID, ExitCode: 1, StderrTail: []string{stderrLine}}))
	e, _ := b.Exit(r.Task)
	require.Equal(t, []string{stderrLine}, e.StderrTail, "the AM gets the tail")

	seen := wire.bytes()
	require.Contains(t, string(seen), PathPrefix+"credentials", "the relay saw the traffic")
	for _, s := range []string{password, base64.StdEncoding.EncodeToString([]byte(password)), "the-stderr-line", "node1.example.com"} {
		require.NotContains(t, string(seen), s)
	}
}

// Issue 18.3: an on-path attacker who takes a launcher's signed headers
// to another path gets an unsigned refusal, never a signed 404 it could
// hand the launcher as the AM's "credentials not served" (which would end
// its token refresh for good). The launcher believes only a signed answer
// to its own request.
func TestOnPathAttackerGetsNoSigned404(t *testing.T) {
	secret := testSecret(t)
	b := newBoard(t, 0, group(taskspec.Worker, 1))
	srv := startServer(t, secret, b)
	// The attacker's relay: every request goes to another endpoint, with
	// the launcher's headers, and the AM's answer comes back as it is.
	relay := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, in *http.Request) {
		out, err := http.NewRequest(in.Method, "http://"+srv.addr+PathPrefix+"nope", nil)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		out.Header = in.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = relay.Serve(ln) }()
	t.Cleanup(func() { relay.Close() })

	c := newTestClient(t, ln.Addr().String(), secret, testContainer)
	_, _, err = c.WaitCredentials(ctxTimeout(t, 5*time.Second), task(taskspec.Worker, 0), 0)
	require.Error(t, err)
	require.False(t, errorsIs(err, ErrNotServed), "taken for the AM's word: %v", err)
	require.ErrorIs(t, err, ErrUnauthorized)

	// What the AM answered the relayed request: unsigned.
	req := signedRequest(t, secret, http.MethodGet, "http://"+srv.addr+PathPrefix+"nope", nil)
	req.URL.Path = PathPrefix + "credentials" // signed for another path
	status, h, _ := sendRaw(t, req.Request)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Empty(t, h.Get(reqsign.HeaderSignature))
}

// Issue 18.3: a stranger's POST is refused on its headers: the AM answers
// while the 60 KiB body has not even been sent, and closes the connection.
func TestServerAnswersBeforeTheBody(t *testing.T) {
	secret := testSecret(t)
	srv := startServer(t, secret, newBoard(t, 0, group(taskspec.Worker, 1)))
	c, err := net.DialTimeout("tcp", srv.addr, 5*time.Second)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "POST "+PathPrefix+"register HTTP/1.1\r\nHost: am\r\nContent-Length: 61440\r\n\r\n")
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "an answer without the body")
	defer resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Empty(t, resp.Header.Get(reqsign.HeaderSignature))
	require.True(t, resp.Close, "the connection closes")
	body, _ := io.ReadAll(resp.Body)
	require.True(t, strings.Contains(string(body), "unsigned request"), "%s", body)
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
