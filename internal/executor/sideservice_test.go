package executor

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// echoService answers each connection with one byte and closes it.
type echoService struct{}

func (echoService) Serve(ctx context.Context, ln net.Listener, _ func(string, ...any)) error {
	go func() { <-ctx.Done(); _ = ln.Close() }()
	for {
		c, err := ln.Accept()
		if err != nil {
			return nil
		}
		_, _ = c.Write([]byte{'!'})
		_ = c.Close()
	}
}

// TestSideServiceBindsTheNodesHost: the side service (torch's store) is
// served on the node's host address only; the reserved port stays taken on
// every other address while it runs, and is freed when it ends.
func TestSideServiceBindsTheNodesHost(t *testing.T) {
	res, err := ReservePort()
	require.NoError(t, err)
	port := strconv.Itoa(res.Port)
	ctx, cancel := context.WithCancel(context.Background())
	var log bytes.Buffer
	require.NoError(t, serveSideService(ctx, res, "127.0.0.1", echoService{}, &logger{w: &log}))
	require.Empty(t, log.String(), "no fallback to every interface")

	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", port), 5*time.Second)
	require.NoError(t, err, "served on the host's address")
	b := make([]byte, 1)
	_, err = c.Read(b)
	require.NoError(t, err)
	c.Close()

	// 127.0.0.2 is this node's too (all of 127/8 is loopback): another
	// address than the host's.
	_, err = net.DialTimeout("tcp", net.JoinHostPort("127.0.0.2", port), 5*time.Second)
	require.Error(t, err, "not served on another address")
	_, err = net.Listen("tcp", net.JoinHostPort("127.0.0.2", port))
	require.Error(t, err, "nobody else binds the port on another address while it is served")
	require.True(t, res.Held())

	cancel()
	require.Eventually(t, func() bool { return !res.Held() }, 5*time.Second, 10*time.Millisecond, "the reservation ends with the service")
}

// A host name that does not bind here: every interface, said in the log.
func TestSideServiceFallsBackToEveryInterface(t *testing.T) {
	res, err := ReservePort()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var log bytes.Buffer
	require.NoError(t, serveSideService(ctx, res, "192.0.2.1", echoService{}, &logger{w: &log}))
	require.Contains(t, log.String(), "listening on every interface")
	c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.2", strconv.Itoa(res.Port)), 5*time.Second)
	require.NoError(t, err)
	c.Close()
}
