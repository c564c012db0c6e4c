package executor

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// Reservation holds a TCP port for the task's program: a socket bound to
// the port with SO_REUSEPORT, never listening.
//
// Why these options and no others (measured on Linux, see port_test.go):
//   - Bound, the port is taken for everyone else: a plain bind or listen
//     (Go's net.Listen, Python's socket, the kernel's ephemeral-port choice
//     for bind(0) and for outgoing connections) fails or skips it.
//   - SO_REUSEPORT lets a socket of the same user that also sets it bind
//     the same port: TensorFlow's gRPC server does when TF_GRPC_REUSE_PORT
//     is true (TensorFlow ≥ 2.3), which the launcher sets.
//   - Not SO_REUSEADDR: with it, Linux lets any SO_REUSEADDR socket (Go's
//     net.Listen sets it) bind a port whose holders do not listen, which
//     would void the reservation.
//   - Not listening: a listening SO_REUSEPORT socket would join the
//     kernel's load-balancing group and receive a share of TensorFlow's
//     connections into a backlog nobody accepts.
type Reservation struct {
	Port int

	mu sync.Mutex
	fd int // -1 once released
}

// ReservePort reserves a free port on all interfaces: IPv6 dual-stack when
// the host has IPv6, since that blocks IPv4 and IPv6 binds alike, else
// IPv4 only.
func ReservePort() (*Reservation, error) { return ReservePortNumber(0) }

// ReservePortNumber reserves port, or a free one for 0: a worker replaced
// in place re-takes the port its predecessor had (contract.EnvRetakePort).
func ReservePortNumber(port int) (*Reservation, error) {
	r, err := reserve(unix.AF_INET6, port)
	if err == nil {
		return r, nil
	}
	r, err4 := reserve(unix.AF_INET, port)
	if err4 != nil {
		return nil, fmt.Errorf("reserving a port: %w (IPv6: %v)", err4, err)
	}
	return r, nil
}

func reserve(family, want int) (*Reservation, error) {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: want}
	if family == unix.AF_INET6 {
		// Dual stack regardless of net.ipv6.bindv6only.
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("IPV6_V6ONLY: %w", err)
		}
		sa = &unix.SockaddrInet6{Port: want}
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("SO_REUSEPORT: %w", err)
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind: %w", err)
	}
	got, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("getsockname: %w", err)
	}
	var port int
	switch a := got.(type) {
	case *unix.SockaddrInet4:
		port = a.Port
	case *unix.SockaddrInet6:
		port = a.Port
	}
	if port == 0 {
		unix.Close(fd)
		return nil, errors.New("the kernel assigned no port")
	}
	return &Reservation{Port: port, fd: fd}, nil
}

// Release frees the port. It is safe to call more than once.
func (r *Reservation) Release() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fd < 0 {
		return nil
	}
	err := unix.Close(r.fd)
	r.fd = -1
	return err
}

// Held reports whether the port is still reserved.
func (r *Reservation) Held() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fd >= 0
}
