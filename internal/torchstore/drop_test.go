package torchstore

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/syncbuf"
)

// TestStrangersCannotFillTheLog: 500 connections that send junk are
// dropped with a few clipped lines in the log, not one each.
func TestStrangersCannotFillTheLog(t *testing.T) {
	var log syncbuf.Buffer
	s := New()
	s.Logf = func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Serve(ctx, ln) }()
	junk := strings.Repeat("\xff", 8<<10)
	for i := 0; i < 500; i++ {
		nc, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
		require.NoError(t, err)
		_, _ = nc.Write([]byte(junk))
		_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = nc.Read(make([]byte, 1)) // until the store drops it
		nc.Close()
	}
	require.Eventually(t, func() bool { return strings.Count(log.String(), "\n") >= 5 }, 5*time.Second, 10*time.Millisecond)
	require.Less(t, len(log.String()), 2<<10, "the log after 500 dropped connections:\n%s", log.String())
}
