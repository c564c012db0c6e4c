package executor

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/tfyarn/tfyarn/internal/torchstore"
	"golang.org/x/sys/unix"
)

// storeBacklog is the listen backlog of the store a launcher serves: every
// agent of a large job may connect at once.
const storeBacklog = 1024

// serveStore turns the reservation's socket into the listener of a torch
// store (framework.Launch.ServeStore) served until ctx ends.
func serveStore(ctx context.Context, res *Reservation, log *logger) error {
	ln, err := res.listen(storeBacklog)
	if err != nil {
		return fmt.Errorf("serving the rendezvous store on port %d: %w", res.Port, err)
	}
	s := torchstore.New()
	s.Logf = log.printf
	go func() {
		if err := s.Serve(ctx, ln); err != nil {
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
