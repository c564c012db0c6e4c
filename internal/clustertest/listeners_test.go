package clustertest

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// listener is one listening TCP socket of a process: its local address.
type listener struct {
	PID  int
	Addr net.IP
	Port int
}

func (l listener) String() string {
	return fmt.Sprintf("%s (pid %d)", net.JoinHostPort(l.Addr.String(), strconv.Itoa(l.Port)), l.PID)
}

// sessionPIDs lists the processes in session sid (the test cluster's launcher starts it with
// setsid: its JVM and the NodeManager JVMs it forks; the containers run in sessions of their own).
func sessionPIDs(t testing.TB, sid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	require.NoError(t, err)
	var pids []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp session ...: comm may hold spaces, so split after its ')'.
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 3 && f[3] == strconv.Itoa(sid) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// listenersOf lists the listening TCP sockets (IPv4 and IPv6) the processes pids hold open.
func listenersOf(t testing.TB, pids []int) []listener {
	t.Helper()
	owner := map[string]int{} // socket inode -> pid
	for _, pid := range pids {
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
				owner[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = pid
			}
		}
	}
	var out []listener
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		require.NoError(t, err)
		ls, err := parseListening(string(b))
		require.NoError(t, err, table)
		for inode, l := range ls {
			if pid, ok := owner[inode]; ok {
				l.PID = pid
				out = append(out, l)
			}
		}
	}
	return out
}

// parseListening reads a /proc/net/tcp or tcp6 table: its sockets in state LISTEN (0A) by inode.
func parseListening(table string) (map[string]listener, error) {
	out := map[string]listener{}
	sc := bufio.NewScanner(strings.NewReader(table))
	sc.Scan() // the header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" {
			continue
		}
		host, port, ok := strings.Cut(f[1], ":")
		raw, err := hex.DecodeString(host)
		p, perr := strconv.ParseUint(port, 16, 16)
		if !ok || err != nil || perr != nil || (len(raw) != 4 && len(raw) != 16) {
			return nil, fmt.Errorf("unreadable local address %q", f[1])
		}
		// The kernel prints each 32-bit word in host (little-endian) order.
		ip := make(net.IP, len(raw))
		for w := 0; w < len(raw); w += 4 {
			for i := 0; i < 4; i++ {
				ip[w+i] = raw[w+3-i]
			}
		}
		out[f[9]] = listener{Addr: ip, Port: int(p)}
	}
	return out, sc.Err()
}

// offLoopback lists the listeners bound to anything but a loopback address (a wildcard bind,
// 0.0.0.0 or ::, listens on every interface of the machine).
func offLoopback(ls []listener) []string {
	var bad []string
	for _, l := range ls {
		if !l.Addr.IsLoopback() {
			bad = append(bad, l.String())
		}
	}
	return bad
}

// TestListenersWildcardFound: the check the cluster's listening-sockets test makes finds a
// wildcard-bound port: in the kernel's own table (this test process listening on 0.0.0.0 for a
// moment, no traffic) and in a table as the kernel prints it, where loopback ones pass.
func TestListenersWildcardFound(t *testing.T) {
	wild, err := net.Listen("tcp4", "0.0.0.0:0")
	require.NoError(t, err)
	defer wild.Close()
	lo, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer lo.Close()
	bad := offLoopback(listenersOf(t, []int{os.Getpid()}))
	require.Equal(t, []string{fmt.Sprintf("0.0.0.0:%d (pid %d)", wild.Addr().(*net.TCPAddr).Port, os.Getpid())}, bad)

	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:1F54 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0 100 0 0 10 0
   1: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0 100 0 0 10 0
   2: 0A01007F:1F49 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1 0 100 0 0 10 0
   3: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 444 1 0 100 0 0 10 0
`
	ls, err := parseListening(table)
	require.NoError(t, err)
	require.Len(t, ls, 3, "the established socket is no listener")
	require.Equal(t, "0.0.0.0:8020 (pid 0)", ls["111"].String())
	require.Equal(t, "127.0.0.1:8080 (pid 0)", ls["222"].String())
	require.Equal(t, "127.0.1.10:8009 (pid 0)", ls["333"].String())
	six := "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: 00000000000000000000000000000000:1F54 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555 1 0 100 0 0 10 0\n" +
		"   1: 00000000000000000000000001000000:1F54 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 666 1 0 100 0 0 10 0\n"
	ls, err = parseListening(six)
	require.NoError(t, err)
	require.Equal(t, []string{"[::]:8020 (pid 0)"}, offLoopback([]listener{ls["555"], ls["666"]}))
}
