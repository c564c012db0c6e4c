package executor

import (
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestClaimsReservedPortIsNeverEphemeral: README "every other bind on the
// node fails, explicit or ephemeral". A socket whose ephemeral range is
// narrowed to the reserved port alone (IP_LOCAL_PORT_RANGE, Linux 6.3+)
// gets no port from bind(0) or connect() while the reservation holds, and
// gets exactly that port once it is released (so the narrowing works).
func TestClaimsReservedPortIsNeverEphemeral(t *testing.T) {
	res, err := ReservePort()
	require.NoError(t, err)
	defer res.Release()
	port := res.Port

	peer, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer peer.Close()
	peerPort := peer.Addr().(*net.TCPAddr).Port

	// ephemeral returns the local port the kernel picked for bind(0) or,
	// with connect set, for an outgoing connection.
	ephemeral := func(connect bool) (int, error) {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		defer unix.Close(fd)
		require.NoError(t, unix.SetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_LOCAL_PORT_RANGE, port|port<<16),
			"IP_LOCAL_PORT_RANGE (Linux 6.3+)")
		if connect {
			err = unix.Connect(fd, &unix.SockaddrInet4{Port: peerPort, Addr: [4]byte{127, 0, 0, 1}})
		} else {
			err = unix.Bind(fd, &unix.SockaddrInet4{})
		}
		if err != nil {
			return 0, err
		}
		sa, err := unix.Getsockname(fd)
		require.NoError(t, err)
		return sa.(*unix.SockaddrInet4).Port, nil
	}

	for _, connect := range []bool{false, true} {
		got, err := ephemeral(connect)
		require.Error(t, err, "connect=%v: the kernel handed out the reserved port %d (got %d)", connect, port, got)
		require.True(t, errors.Is(err, unix.EADDRINUSE) || errors.Is(err, unix.EADDRNOTAVAIL), "connect=%v: %v", connect, err)
	}

	require.NoError(t, res.Release())
	got, err := ephemeral(false)
	require.NoError(t, err, "released: the narrowed range yields the port")
	require.Equal(t, port, got)
}
