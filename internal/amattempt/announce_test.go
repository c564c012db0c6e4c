package amattempt

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/reqsign"
	"github.com/tfyarn/tfyarn/internal/syncbuf"
)

const testContainer = "container_1_0001_01_000002"

// launcherPort is a launcher's control port as Listen opens it on the
// loopback, started by attempt 1, with the container key derived from
// secret; log collects its refusals.
func launcherPort(t *testing.T, secret []byte, now func() time.Time) (*Listener, *syncbuf.Buffer) {
	t.Helper()
	var log syncbuf.Buffer
	l, err := Listen(ListenConfig{
		Host: "127.0.0.1", ContainerID: testContainer, Key: rendezvous.ContainerKey(secret, testContainer), Attempt: 1,
		Logf: func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }, Now: now,
	})
	require.NoError(t, err)
	t.Cleanup(l.Close)
	return l, &log
}

func secretOf(t *testing.T) []byte {
	t.Helper()
	s, err := rendezvous.NewSecret()
	require.NoError(t, err)
	return s
}

// call is an announcement as it crosses the wire: headers and body.
type call struct {
	header http.Header
	body   []byte
}

// post sends c to l's control port as anyone on the network could.
func post(t *testing.T, l *Listener, c call) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:"+strconv.Itoa(l.Port())+AnnouncePath, bytes.NewReader(c.body))
	require.NoError(t, err)
	req.Header = c.header.Clone()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	return resp.StatusCode, body.String()
}

// signed is a, signed at `at` with key as the AM signs it.
func signed(t testing.TB, key []byte, a Announcement, at time.Time) call {
	t.Helper()
	if a.ContainerID == "" {
		a.ContainerID = testContainer
	}
	req, err := NewAnnouncementRequest(context.Background(), "http://launcher:1"+AnnouncePath, key, a, at)
	require.NoError(t, err)
	body, err := io.ReadAll(req.Body)
	require.NoError(t, err)
	return call{header: req.Header, body: body}
}

// with returns c with header name set to value.
func (c call) with(name, value string) call {
	c.header = c.header.Clone()
	c.header.Set(name, value)
	return c
}

// The new attempt names its address on the launcher's control port, with
// the job's secret; the launcher's Locate then hands it out.
func TestAnnounceReachesTheLauncher(t *testing.T) {
	secret := secretOf(t)
	l, _ := launcherPort(t, secret, nil)
	_, err := l.Locate(context.Background())
	require.EqualError(t, err, "no later ApplicationMaster attempt has called yet")
	require.Equal(t, "control port 127.0.0.1:"+strconv.Itoa(l.Port()), l.Where())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	task := Task{Task: "worker:0", ContainerID: testContainer, Host: "127.0.0.1", Port: 2222, Control: l.Port()}
	require.NoError(t, Announce(ctx, secret, 2, "node2:4321", task))
	addr, err := l.Locate(ctx)
	require.NoError(t, err)
	require.Equal(t, "node2:4321", addr)
	require.NoError(t, Announce(ctx, secret, 2, "node2:4321", task), "a retry of the same announcement is fine")
	require.ErrorContains(t, Announce(ctx, secret, 2, "evil:1", task), "the launcher refused (409)")
	require.NoError(t, Announce(ctx, secret, 3, "node3:1", task), "a newer attempt")
	addr, _ = l.Locate(ctx)
	require.Equal(t, "node3:1", addr)
	require.EqualError(t, Announce(ctx, secret, 3, "node3:1", Task{Task: "worker:1"}), "worker:1's launcher announced no control port")
}

// The attack: another user on the node (or anyone who reaches the port)
// tries to send the launcher elsewhere. Without the job's secret, with
// another container's key, or by replaying a message the AM sent, it
// cannot: the launcher keeps the address the AM named, and logs the
// refusals without any key.
func TestStrangersCannotRedirectTheLauncher(t *testing.T) {
	secret := secretOf(t)
	key := rendezvous.ContainerKey(secret, testContainer)
	now := time.Now()
	l, log := launcherPort(t, secret, func() time.Time { return now })
	genuine := signed(t, key, Announcement{Attempt: 2, AM: "node2:4321"}, now)
	status, _ := post(t, l, genuine)
	require.Equal(t, http.StatusNoContent, status)

	otherPurpose := func(purpose string, key []byte) call {
		body := []byte(`{"attempt":9,"am":"evil:1"}`)
		r, err := reqsign.NewRequest(purpose, http.MethodPost, AnnouncePath, testContainer, now)
		require.NoError(t, err)
		h := http.Header{}
		r.Sign(key, body, h)
		return call{header: h, body: body}
	}
	evil := Announcement{Attempt: 9, AM: "evil:1"}
	attacks := []struct {
		name   string
		call   call
		status int
	}{
		{"no signature at all", call{header: http.Header{}, body: []byte(`{"attempt":9,"am":"evil:1"}`)}, http.StatusUnauthorized},
		{"a zero signature", signed(t, key, evil, now).with(reqsign.HeaderSignature, strings.Repeat("0", 64)), http.StatusUnauthorized},
		{"a guessed key", signed(t, []byte("guess"), evil, now), http.StatusUnauthorized},
		{"another job's secret", signed(t, rendezvous.ContainerKey(secretOf(t), testContainer), evil, now), http.StatusUnauthorized},
		{"another container's key (a task of the same job)", signed(t, rendezvous.ContainerKey(secret, "container_1_0001_01_000003"), evil, now), http.StatusUnauthorized},
		{"the container's key itself, not the announcements' key", otherPurpose(announcePurpose, key), http.StatusUnauthorized},
		{"the announcements' key under another purpose", otherPurpose("tfyarn-rendezvous-v2 request", announceKey(key)), http.StatusUnauthorized},
		{"a genuine message, replayed", genuine, http.StatusUnauthorized},
		{"an older attempt's genuine message", signed(t, key, Announcement{Attempt: 1, AM: "evil:1"}, now), http.StatusConflict},
		{"the same attempt, another address", signed(t, key, Announcement{Attempt: 2, AM: "evil:1"}, now), http.StatusConflict},
		{"a genuine message captured long ago", signed(t, key, Announcement{Attempt: 5, AM: "evil:1"}, now.Add(-time.Hour)), http.StatusUnauthorized},
		{"a message sent from the future", signed(t, key, Announcement{Attempt: 5, AM: "evil:1"}, now.Add(time.Hour)), http.StatusUnauthorized},
		{"a message for another container", signed(t, key, Announcement{ContainerID: "container_1_0001_01_000003", Attempt: 5, AM: "evil:1"}, now), http.StatusBadRequest},
		{"a genuine message with another body", func() call {
			c := signed(t, key, Announcement{Attempt: 5, AM: "node5:1"}, now)
			c.body = []byte(`{"attempt":5,"am":"evil:1"}`)
			return c
		}(), http.StatusUnauthorized},
		{"too large", func() call {
			c := signed(t, key, Announcement{Attempt: 5, AM: "evil:1"}, now)
			c.body = append(c.body, bytes.Repeat([]byte(" "), MaxAnnouncement)...)
			return c
		}(), http.StatusRequestEntityTooLarge},
	}
	for _, a := range attacks {
		status, _ := post(t, l, a.call)
		require.Equal(t, a.status, status, a.name)
		addr, err := l.Locate(context.Background())
		require.NoError(t, err)
		require.Equal(t, "node2:4321", addr, "after %s the launcher still follows the AM's announcement", a.name)
	}
	l.refused.Flush() // writes the count of the refusals past the first few
	require.NotContains(t, log.String(), string(key))
	require.NotContains(t, log.String(), genuine.header.Get(reqsign.HeaderSignature), "no MAC in the log")
	require.Contains(t, log.String(), "bad signature (wrong key, or the request was altered)")
	require.Contains(t, log.String(), "replayed request")

	// A GET, or another path, is nothing.
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(l.Port()) + AnnouncePath)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp, err = http.Get("http://127.0.0.1:" + strconv.Itoa(l.Port()) + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// Strangers' idle connections cannot keep the AM out: the oldest is
// closed for a new one.
func TestIdleConnectionsDoNotLockOutTheAM(t *testing.T) {
	secret := secretOf(t)
	l, _ := launcherPort(t, secret, nil)
	for range controlMaxConns * 3 {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(l.Port()))
		require.NoError(t, err)
		defer c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, Announce(ctx, secret, 2, "node2:4321", Task{Task: "worker:0", ContainerID: testContainer, Host: "127.0.0.1", Control: l.Port()}))
}

// Whatever arrives, a launcher takes only a valid announcement signed
// with its key, and never panics: the body is fuzzed under a correct
// signature (what reaches the decoder), and with signature headers from
// the fuzzer (what a stranger can send; the headers' parser has its own
// target, reqsign's FuzzParse).
func FuzzDecodeAnnouncement(f *testing.F) {
	key := rendezvous.ContainerKey([]byte("0123456789abcdef0123456789abcdef"), testContainer)
	now := time.UnixMilli(1_800_000_000_000)
	good := signed(f, key, Announcement{Attempt: 2, AM: "node2:4321"}, now)
	f.Add(good.body, "")
	f.Add([]byte(`{"attempt":2,"am":"[::1]:1"}`), "")
	f.Add([]byte(`{"attempt":2,"am":"node2:4321","x":1}`), "")
	f.Add(good.body, good.header.Get(reqsign.HeaderSignature))
	f.Add([]byte("{}"), strings.Repeat("0", 64))
	f.Fuzz(func(t *testing.T, body []byte, sig string) {
		l := &Listener{containerID: testContainer, key: announceKey(key), attempt: 1,
			verifier: reqsign.NewVerifier(AnnounceSkew, maxAnnounceNonces), now: func() time.Time { return now }}
		req := httptest.NewRequest(http.MethodPost, AnnouncePath, bytes.NewReader(body))
		r, err := reqsign.NewRequest(announcePurpose, http.MethodPost, AnnouncePath, testContainer, now)
		if err != nil {
			t.Fatal(err)
		}
		genuine := r.Sign(announceKey(key), body, req.Header)
		forged := sig != "" && !strings.EqualFold(sig, genuine) // hex: either case
		if sig != "" {
			req.Header.Set(reqsign.HeaderSignature, sig)
		}
		status, err := l.take(httptest.NewRecorder(), req)
		if forged && status != http.StatusUnauthorized {
			t.Fatalf("a forged signature answered %d (%v)", status, err)
		}
		if status != http.StatusNoContent {
			return
		}
		a, err := decodeAnnouncement(testContainer, body)
		if err != nil || a.validate() != nil || a.Attempt < 2 {
			t.Fatalf("accepted %q: %v", body, err)
		}
		if addr, err := l.Locate(context.Background()); err != nil || addr != a.AM {
			t.Fatalf("accepted %+v, locates %q (%v)", a, addr, err)
		}
	})
}
