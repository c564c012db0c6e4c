package appmaster

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type closeService struct{}

func (closeService) Serve(ctx context.Context, ln net.Listener, _ func(string, ...any)) error {
	<-ctx.Done()
	return ln.Close()
}

// TestJobServiceBindsTheAMsHost: an elastic job's store listens on the
// AM's host address, not every interface.
func TestJobServiceBindsTheAMsHost(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logged []string
	addr, err := serveJobService(ctx, "127.0.0.1", closeService{}, func(f string, a ...any) { logged = append(logged, f) })
	require.NoError(t, err)
	require.Empty(t, logged)
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err, "served on the host's address")
	c.Close()
	_, err = net.DialTimeout("tcp", net.JoinHostPort("127.0.0.2", port), 5*time.Second)
	require.Error(t, err, "not on another address")
}
