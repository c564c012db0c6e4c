package executor

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/tfyarn/tfyarn/internal/framework"
	"golang.org/x/sys/unix"
)

// serviceBacklog is the listen backlog of the side service a launcher
// serves: every task of a large job may connect at once.
const serviceBacklog = 1024

// serveSideService serves the framework's side service
// (framework.Launch.Serve) on the reserved port until ctx ends: on the
// node's host address (host, NM_HOST), where the other tasks reach it, not
// on every interface. The reservation's socket stays bound (not listening)
// meanwhile, so that nobody else binds the port on another interface. When
// host's address does not bind here (a name for a NAT address, say), the
// reservation's socket itself listens, on every interface.
func serveSideService(ctx context.Context, res *Reservation, host string, svc framework.SideService, log *logger) error {
	ln, err := listenOnHost(ctx, host, res.Port, serviceBacklog)
	if err == nil {
		context.AfterFunc(ctx, func() { _ = res.Release() })
	} else {
		log.printf("binding the side service on %s (%v): listening on every interface", net.JoinHostPort(host, strconv.Itoa(res.Port)), err)
		ln, err = res.listen(serviceBacklog)
	}
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

// resolveTimeout bounds the look-up of the node's host name.
const resolveTimeout = 10 * time.Second

// listenOnHost listens on port of host's address (its first IPv4 address,
// else its first, as net.Listen picks) with SO_REUSEPORT, which the
// reservation's socket (this process's, also SO_REUSEPORT) allows.
func listenOnHost(ctx context.Context, host string, port, backlog int) (net.Listener, error) {
	if host == "" {
		return nil, fmt.Errorf("no host name")
	}
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	ip := ips[0]
	for _, a := range ips {
		if a.Unmap().Is4() {
			ip = a
			break
		}
	}
	ip = ip.Unmap()
	family, sa := unix.AF_INET6, unix.Sockaddr(&unix.SockaddrInet6{Port: port, Addr: ip.As16()})
	if ip.Is4() {
		family, sa = unix.AF_INET, &unix.SockaddrInet4{Port: port, Addr: ip.As4()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	f := os.NewFile(uintptr(fd), fmt.Sprintf("port-%d-on-host", port))
	defer f.Close()
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
		return nil, fmt.Errorf("SO_REUSEPORT: %w", err)
	}
	if err := unix.Bind(fd, sa); err != nil {
		return nil, fmt.Errorf("bind %s: %w", ip, err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	return net.FileListener(f)
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
