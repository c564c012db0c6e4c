package appmaster

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/taskspec"
)

// jobServiceKey is a new key for the side service of job's framework
// (framework.NewJobServiceKey), this attempt's own: a later attempt starts
// every task again, on its own service. nil when the framework has none.
func jobServiceKey(job taskspec.Job) ([]byte, error) {
	if frameworks.JobServiceOf(job, nil) == nil {
		return nil, nil
	}
	key, err := framework.NewJobServiceKey()
	if err != nil {
		return nil, fmt.Errorf("appmaster: %w", err)
	}
	return key, nil
}

// serveJobService serves the side service of the job's framework
// (framework.Framework.JobService) on a port of the AM's host until ctx
// ends, where it outlives any task, and returns its host:port for the
// tasks. It binds the host's address, not every interface; when the host's
// name does not bind here (a name for a NAT address, say), every interface,
// as the AM's other listeners do.
func serveJobService(ctx context.Context, host string, svc framework.SideService, logf func(string, ...any)) (string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil && host != "" {
		logf("binding the job's side service on %s (%v): listening on every interface", host, err)
		ln, err = net.Listen("tcp", ":0")
	}
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
