package connlimit

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// closed reports whether the server closed c (within d).
func closed(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := c.Read(make([]byte, 1))
	return err == io.EOF
}

// The oldest stranger makes room for a new one; a trusted connection is
// never evicted, whatever the flood.
func TestListenerEvictsTheOldestUntrusted(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := NewListener(inner, 2, 1)
	hs := &http.Server{
		ConnContext: ConnContext,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/login" {
				_, _ = io.WriteString(w, map[bool]string{true: "trusted", false: "not trusted"}[Trust(r.Context())])
				return
			}
			_, _ = io.WriteString(w, "hello")
		}),
	}
	go func() { _ = hs.Serve(l) }()
	t.Cleanup(func() { _ = hs.Close() })
	addr := inner.Addr().String()

	// A connection that authenticates leaves the pool.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	t.Cleanup(client.CloseIdleConnections)
	get := func(path string) string {
		resp, err := client.Get("http://" + addr + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(b)
	}
	require.Equal(t, "trusted", get("/login"))
	require.Eventually(t, func() bool { u, tr := l.Counts(); return u == 0 && tr == 1 }, 5*time.Second, 10*time.Millisecond)

	// Three idle strangers: the first is closed when the third arrives.
	a := dial(t, addr)
	require.Eventually(t, func() bool { u, _ := l.Counts(); return u == 1 }, 5*time.Second, 10*time.Millisecond)
	b := dial(t, addr)
	require.Eventually(t, func() bool { u, _ := l.Counts(); return u == 2 }, 5*time.Second, 10*time.Millisecond)
	c := dial(t, addr)
	require.True(t, closed(a, 5*time.Second), "the oldest stranger was closed")
	require.False(t, closed(b, 200*time.Millisecond))
	require.False(t, closed(c, 200*time.Millisecond))
	require.EqualValues(t, 1, l.Evicted())

	// The trusted connection still serves (the client reuses it).
	require.Equal(t, "hello", get("/"))
	// No room for a second trusted connection: it stays a stranger.
	other := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(other.CloseIdleConnections)
	resp, err := other.Get("http://" + addr + "/login")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "not trusted", string(body))
	_, tr := l.Counts()
	require.Equal(t, 1, tr)

	// Closing frees places.
	client.CloseIdleConnections()
	require.Eventually(t, func() bool { _, tr := l.Counts(); return tr == 0 }, 5*time.Second, 10*time.Millisecond)
	require.False(t, Trust(context.Background()), "a request from elsewhere is not trusted")
}
