package executor

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestReservationBlocksPlainBindsButNotReusePort(t *testing.T) {
	res, err := ReservePort()
	require.NoError(t, err)
	defer res.Release()
	port := res.Port
	require.NotZero(t, port)

	// Go's net.Listen sets SO_REUSEADDR: the reservation must hold anyway.
	for _, network := range []string{"tcp", "tcp4", "tcp6"} {
		ln, err := net.Listen(network, fmt.Sprintf(":%d", port))
		if err == nil {
			ln.Close()
		}
		require.Error(t, err, "plain %s listen on a reserved port", network)
	}
	ln, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err == nil {
		ln.Close()
	}
	require.Error(t, err, "a specific address is blocked too")

	// A SO_REUSEPORT listener, like TF's gRPC server with
	// TF_GRPC_REUSE_PORT, takes it, and gets every connection: the
	// reservation does not listen, so it is not in the load-balancing group.
	srv, err := reusePortListen("tcp", fmt.Sprintf(":%d", port))
	require.NoError(t, err)
	defer srv.Close()
	accepted := make(chan struct{}, 20)
	go func() {
		for {
			c, err := srv.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	for i := 0; i < 20; i++ {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 2*time.Second)
		require.NoError(t, err)
		c.Close()
		select {
		case <-accepted:
		case <-time.After(2 * time.Second):
			t.Fatalf("connection %d went elsewhere", i)
		}
	}

	ok, err := listening(port)
	if err == nil {
		require.True(t, ok, "/proc/net/tcp shows the program's listener")
	}

	require.NoError(t, res.Release())
	require.NoError(t, res.Release(), "twice is fine")
	require.False(t, res.Held())
}

func TestReleasedPortIsFree(t *testing.T) {
	res, err := ReservePort()
	require.NoError(t, err)
	require.NoError(t, res.Release())
	ln, err := net.Listen("tcp", fmt.Sprintf(":%d", res.Port))
	require.NoError(t, err)
	ln.Close()
}

func TestListeningParsesProcNet(t *testing.T) {
	dir := t.TempDir()
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:0016 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 2 1 0000000000000000 20 4 30 10 -1
   2: 00000000:A1B2 00000000:0000 07 00000000:00000000 00:00000000 00000000  1000        0 3 1 0000000000000000 100 0 0 10 0
`
	path := filepath.Join(dir, "tcp")
	require.NoError(t, os.WriteFile(path, []byte(table), 0o644))
	for port, want := range map[int]bool{8080: true, 22: false, 0xA1B2: false, 1: false} {
		got, err := listeningIn(path, port)
		require.NoError(t, err)
		require.Equal(t, want, got, "port %d", port)
	}
	p, err := parseHexPort("1F90")
	require.NoError(t, err)
	require.Equal(t, 8080, p)

	old := procNetFiles
	defer func() { procNetFiles = old }()
	procNetFiles = []string{filepath.Join(dir, "missing")}
	_, err = listening(8080)
	require.ErrorIs(t, err, errNoProcNet)
}

// A worker replaced in place re-takes its predecessor's port once the
// predecessor is gone.
func TestReservePortNumberRetakesAPort(t *testing.T) {
	first, err := ReservePort()
	if err != nil {
		t.Fatal(err)
	}
	port := first.Port
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := ReservePortNumber(port)
	if err != nil {
		t.Fatalf("re-taking port %d: %v", port, err)
	}
	defer again.Release()
	if again.Port != port {
		t.Fatalf("reserved port %d, want %d", again.Port, port)
	}
}
