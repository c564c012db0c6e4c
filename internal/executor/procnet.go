package executor

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procNetFiles list the kernel's TCP sockets of this network namespace,
// which the task's program shares with its launcher.
var procNetFiles = []string{"/proc/net/tcp", "/proc/net/tcp6"}

// tcpListen is the state column's value for LISTEN in /proc/net/tcp.
const tcpListen = "0A"

// errNoProcNet means the socket tables cannot be read (not Linux, or /proc
// not mounted): the caller falls back to a timeout.
var errNoProcNet = errors.New("no readable /proc/net/tcp")

// listening reports whether some socket listens on port. While the
// launcher holds the port, only a same-user SO_REUSEPORT socket can bind
// it, so a listener there is the task's program.
func listening(port int) (bool, error) {
	readable := false
	for _, path := range procNetFiles {
		found, err := listeningIn(path, port)
		if err != nil {
			continue
		}
		readable = true
		if found {
			return true, nil
		}
	}
	if !readable {
		return false, errNoProcNet
	}
	return false, nil
}

// listeningIn scans one table. Lines look like
//
//	sl  local_address rem_address   st tx_queue ...
//	0: 00000000:1F90 00000000:0000 0A 00000000:00000000 ...
//
// with the local port in hex after the colon.
func listeningIn(path string, port int) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	want := fmt.Sprintf("%04X", port)
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[3] != tcpListen {
			continue
		}
		_, p, ok := strings.Cut(fields[1], ":")
		if ok && strings.EqualFold(p, want) {
			return true, nil
		}
	}
	return false, sc.Err()
}

// parseHexPort is the inverse, for tests.
func parseHexPort(s string) (int, error) {
	n, err := strconv.ParseUint(s, 16, 16)
	return int(n), err
}
