package rendezvous

import (
	"bytes"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/reqsign"

	"github.com/tfyarn/tfyarn/taskspec"
)

func registerURL(addr string) string { return "http://" + addr + PathPrefix + "register" }

func TestServerRefusesWrongSecretAndLogsWithoutIt(t *testing.T) {
	secret := testSecret(t)
	board := newBoard(t, 0, group(taskspec.Worker, 1))
	srv := startServer(t, secret, board)

	wrong := testSecret(t)
	req := signedRequest(t, wrong, "POST", registerURL(srv.addr), encodeRegistration(reg(taskspec.Worker, 0, 2222)))
	sig := req.Header.Get(reqsign.HeaderSignature)
	status, body, signed := sendSigned(t, req)
	require.Equal(t, http.StatusUnauthorized, status)
	require.False(t, signed)
	require.Contains(t, body, "bad signature")
	require.Empty(t, board.Registrations())

	logs := srv.logs.String()
	require.Contains(t, logs, "rendezvous: refused POST /rendezvous/v1/register from 127.0.0.1:")
	require.Contains(t, logs, "bad signature")
	for _, s := range [][]byte{secret, wrong} {
		require.NotContains(t, logs, hex.EncodeToString(s))
		require.NotContains(t, logs, string(s))
	}
	require.NotContains(t, logs, sig)
}

func TestServerRefusesTamperedBody(t *testing.T) {
	secret := testSecret(t)
	board := newBoard(t, 0, group(taskspec.Worker, 2))
	srv := startServer(t, secret, board)

	req := signedRequest(t, secret, "POST", registerURL(srv.addr), encodeRegistration(reg(taskspec.Worker, 0, 2222)))
	// Another body sealed with the right key, under the same headers.
	other := signedRequest(t, secret, "POST", registerURL(srv.addr), encodeRegistration(reg(taskspec.Worker, 1, 6666)))
	forged, err := io.ReadAll(other.Body)
	require.NoError(t, err)
	req.Body = ioNopCloser(forged)
	req.ContentLength = int64(len(forged))
	status, body, signed := sendSigned(t, req)
	require.Equal(t, http.StatusUnauthorized, status, body)
	require.False(t, signed)
	require.Contains(t, body, "does not match its signed digest")
	require.Empty(t, board.Registrations())
}

func TestServerRefusesReplay(t *testing.T) {
	secret := testSecret(t)
	board := newBoard(t, 0, group(taskspec.Worker, 1))
	srv := startServer(t, secret, board)

	req := signedRequest(t, secret, "POST", registerURL(srv.addr), encodeRegistration(reg(taskspec.Worker, 0, 2222)))
	wire, err := io.ReadAll(req.Body)
	require.NoError(t, err)
	req.Body = ioNopCloser(wire)
	replay := req.Clone(req.Context())
	replay.Body = ioNopCloser(wire)

	status, _, _ := sendSigned(t, req)
	require.Equal(t, http.StatusOK, status)
	status, resp := send(t, replay)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, resp, "replayed")
	require.Contains(t, srv.logs.String(), "replayed")
}

func TestServerRefusesStaleRequest(t *testing.T) {
	secret := testSecret(t)
	board := newBoard(t, 0, group(taskspec.Worker, 1))
	// The server's clock runs 10 minutes ahead of the launcher's.
	srv := startServer(t, secret, board, withClock(func() time.Time { return time.Now().Add(10 * time.Minute) }))
	status, body, _ := sendSigned(t, signedRequest(t, secret, "POST", registerURL(srv.addr), encodeRegistration(reg(taskspec.Worker, 0, 2222))))
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, body, "timestamp off")
}

func TestServerBoundsBodies(t *testing.T) {
	secret := testSecret(t)
	board := newBoard(t, 0, group(taskspec.Worker, 1))
	srv := startServer(t, secret, board)
	big := bytes.Repeat([]byte("x"), MaxBodyBytes+1)
	status, body, signed := sendSigned(t, signedRequest(t, secret, "POST", registerURL(srv.addr), big))
	require.Equal(t, http.StatusRequestEntityTooLarge, status, body)
	require.False(t, signed, "a body the server did not read is not vouched for")

	// Unsigned: refused on its headers, the body never read.
	req, _ := http.NewRequest("POST", registerURL(srv.addr), bytes.NewReader(big))
	status, _ = send(t, req)
	require.Equal(t, http.StatusUnauthorized, status)
}

func TestServerRoutes(t *testing.T) {
	secret := testSecret(t)
	board := newBoard(t, 0, group(taskspec.Worker, 1))
	srv := startServer(t, secret, board)
	status, _, signed := sendSigned(t, signedRequest(t, secret, "GET", "http://"+srv.addr+PathPrefix+"nope", nil))
	require.Equal(t, http.StatusNotFound, status)
	require.True(t, signed, "an authenticated request's 404 is the AM's word")
	status, _, _ = sendSigned(t, signedRequest(t, secret, "GET", registerURL(srv.addr), nil))
	require.Equal(t, http.StatusMethodNotAllowed, status)
	status, body, _ := sendSigned(t, signedRequest(t, secret, "POST", registerURL(srv.addr), []byte(`{"task":"worker:0","host":"h h","port":1}`)))
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "not allowed in a host name")
	status, body, _ = sendSigned(t, signedRequest(t, secret, "POST", registerURL(srv.addr), encodeRegistration(reg(taskspec.PS, 0, 1))))
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, body, "unknown_task")
}

func TestServerLongPollNotYet(t *testing.T) {
	secret := testSecret(t)
	board := newBoard(t, 0, group(taskspec.Worker, 2))
	srv := startServer(t, secret, board)
	start := time.Now()
	status, body, _ := sendSigned(t, signedRequest(t, secret, "GET", "http://"+srv.addr+PathPrefix+"spec?task=worker:0&wait=100", nil))
	require.Equal(t, http.StatusNoContent, status)
	require.Empty(t, body)
	require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
}

func ioNopCloser(b []byte) *nopCloser { return &nopCloser{bytes.NewReader(b)} }

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

// TestStrangersCannotFillTheLog: 1,000 unsigned requests with 8 KiB
// paths leave a few clipped lines in the AM's log, not one each (issue
// 33.1: 15 KiB a request filled the NodeManager's log disk).
func TestStrangersCannotFillTheLog(t *testing.T) {
	board := newBoard(t, 0, group(taskspec.Worker, 1))
	srv := startServer(t, testSecret(t), board)
	path := PathPrefix + "spec/" + strings.Repeat("A", 8<<10)
	client := &http.Client{Timeout: 10 * time.Second}
	for i := 0; i < 1000; i++ {
		resp, err := client.Get("http://" + srv.addr + path)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	}
	logs := srv.logs.String()
	require.Less(t, len(logs), 4<<10, "the log after 1,000 refusals:\n%s", logs)
	require.NotContains(t, logs, strings.Repeat("A", 200))
}
