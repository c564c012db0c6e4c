package amattempt

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
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

// post sends wire to l's control port as anyone on the network could.
func post(t *testing.T, l *Listener, wire []byte) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:"+strconv.Itoa(l.Port())+AnnouncePath, bytes.NewReader(wire))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	return resp.StatusCode, body.String()
}

func signed(t *testing.T, key []byte, a Announcement) []byte {
	t.Helper()
	if a.Nonce == "" {
		a.Nonce = strings.Repeat("ab", nonceBytes)
	}
	if a.SentUnixMS == 0 {
		a.SentUnixMS = time.Now().UnixMilli()
	}
	wire, err := EncodeAnnouncement(key, a)
	require.NoError(t, err)
	return wire
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
	genuine := signed(t, key, Announcement{ContainerID: testContainer, Attempt: 2, AM: "node2:4321", SentUnixMS: now.UnixMilli()})
	status, _ := post(t, l, genuine)
	require.Equal(t, http.StatusNoContent, status)

	attacks := []struct {
		name   string
		wire   []byte
		status int
	}{
		{"no key at all", []byte(strings.Repeat("0", 64) + "\n" + `{"container":"` + testContainer + `","attempt":9,"am":"evil:1","sent_ms":1,"nonce":"` + strings.Repeat("ab", 16) + `"}`), http.StatusUnauthorized},
		{"a guessed key", signed(t, []byte("guess"), Announcement{ContainerID: testContainer, Attempt: 9, AM: "evil:1"}), http.StatusUnauthorized},
		{"another job's secret", signed(t, rendezvous.ContainerKey(secretOf(t), testContainer), Announcement{ContainerID: testContainer, Attempt: 9, AM: "evil:1"}), http.StatusUnauthorized},
		{"another container's key (a task of the same job)", signed(t, rendezvous.ContainerKey(secret, "container_1_0001_01_000003"), Announcement{ContainerID: testContainer, Attempt: 9, AM: "evil:1"}), http.StatusUnauthorized},
		{"the container's own raw rendezvous MAC domain", append(append([]byte(nil), genuine[:64]...), []byte("\n"+`{"container":"`+testContainer+`","attempt":9,"am":"evil:1"}`)...), http.StatusUnauthorized},
		{"a genuine message, replayed", genuine, http.StatusNoContent}, // same attempt, same address: nothing changes
		{"an older attempt's genuine message", signed(t, key, Announcement{ContainerID: testContainer, Attempt: 1, AM: "evil:1", SentUnixMS: now.UnixMilli()}), http.StatusConflict},
		{"the same attempt, another address", signed(t, key, Announcement{ContainerID: testContainer, Attempt: 2, AM: "evil:1", SentUnixMS: now.UnixMilli()}), http.StatusConflict},
		{"a genuine message captured long ago", signed(t, key, Announcement{ContainerID: testContainer, Attempt: 5, AM: "evil:1", SentUnixMS: now.Add(-time.Hour).UnixMilli()}), http.StatusBadRequest},
		{"a message for another container", signed(t, key, Announcement{ContainerID: "container_1_0001_01_000003", Attempt: 5, AM: "evil:1", SentUnixMS: now.UnixMilli()}), http.StatusBadRequest},
		{"too large", append(signed(t, key, Announcement{ContainerID: testContainer, Attempt: 5, AM: "evil:1"}), bytes.Repeat([]byte(" "), MaxAnnouncement)...), http.StatusRequestEntityTooLarge},
	}
	for _, a := range attacks {
		status, _ := post(t, l, a.wire)
		require.Equal(t, a.status, status, a.name)
		addr, err := l.Locate(context.Background())
		require.NoError(t, err)
		require.Equal(t, "node2:4321", addr, "after %s the launcher still follows the AM's announcement", a.name)
	}
	require.NotContains(t, log.String(), string(key))
	require.NotContains(t, log.String(), string(genuine[:64]), "no MAC in the log")

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

// Whatever arrives, the decoder returns a valid announcement signed with
// the key, or an error; it never panics.
func FuzzDecodeAnnouncement(f *testing.F) {
	key := rendezvous.ContainerKey([]byte("0123456789abcdef0123456789abcdef"), testContainer)
	now := time.UnixMilli(1_800_000_000_000)
	good, _ := EncodeAnnouncement(key, Announcement{ContainerID: testContainer, Attempt: 2, AM: "node2:4321", SentUnixMS: now.UnixMilli(), Nonce: strings.Repeat("0f", nonceBytes)})
	f.Add(good)
	f.Add([]byte("\n{}"))
	f.Add(append([]byte(strings.Repeat("a", 64)+"\n"), good[65:]...))
	f.Fuzz(func(t *testing.T, wire []byte) {
		a, err := DecodeAnnouncement(key, wire, now)
		if err != nil {
			return
		}
		if a.validate() != nil {
			t.Fatalf("accepted an invalid announcement %+v", a)
		}
		again, err := EncodeAnnouncement(key, a)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeAnnouncement(key, again, now); err != nil {
			t.Fatalf("re-encoded %+v does not decode: %v", a, err)
		}
	})
}
