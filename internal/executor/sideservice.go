package executor

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/tfyarn/tfyarn/internal/framework"
	"golang.org/x/sys/unix"
)

// serviceBacklog is the listen backlog of the side service a launcher
// serves: every task of a large job may connect at once.
const serviceBacklog = 1024

// serveSideService turns the reservation's socket into the listener of the
// framework's side service (framework.Launch.Serve), served until ctx ends.
func serveSideService(ctx context.Context, res *Reservation, svc framework.SideService, log *logger) error {
	ln, err := res.listen(serviceBacklog)
	if err != nil {
		return fmt.Errorf("serving the side service on port %d: %w", res.Port, err)
	}
	go func() {
		if err := svc.Serve(ctx, ln, log.printf); err != nil {
			log.printf("%v", err)
		}
	}()
	return nil
}

// listen makes the reserved socket a listener, which the reservation no
// longer owns.
func (r *Reservation) listen(backlog int) (net.Listener, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fd < 0 {
		return nil, fmt.Errorf("port %d is no longer reserved", r.Port)
	}
	if err := unix.Listen(r.fd, backlog); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	f := os.NewFile(uintptr(r.fd), fmt.Sprintf("port-%d", r.Port))
	r.fd = -1
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("listener: %w", err)
	}
	return ln, nil
}
