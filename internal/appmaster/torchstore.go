package appmaster

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/tfyarn/tfyarn/internal/torchstore"
)

// serveTorchStore serves an elastic PyTorch job's rendezvous store (torch's
// TCPStore protocol) on a port of the AM's host until ctx ends, and returns
// its host:port for the tasks.
func serveTorchStore(ctx context.Context, host string, logf func(string, ...any)) (string, error) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		return "", fmt.Errorf("appmaster: the rendezvous store: %w", err)
	}
	s := torchstore.New()
	s.Logf = logf
	go func() {
		if err := s.Serve(ctx, ln); err != nil {
			logf("%v", err)
		}
	}()
	return net.JoinHostPort(host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)), nil
}
