package appmaster

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/tfyarn/tfyarn/internal/framework"
)

// serveJobService serves the side service of the job's framework
// (framework.Framework.JobService) on a port of the AM's host until ctx
// ends, where it outlives any task, and returns its host:port for the
// tasks.
func serveJobService(ctx context.Context, host string, svc framework.SideService, logf func(string, ...any)) (string, error) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		return "", fmt.Errorf("appmaster: the job's side service: %w", err)
	}
	go func() {
		if err := svc.Serve(ctx, ln, logf); err != nil {
			logf("%v", err)
		}
	}()
	return net.JoinHostPort(host, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)), nil
}
