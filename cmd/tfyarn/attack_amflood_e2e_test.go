//go:build e2e

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// Sizes of the flood, per AM port (issue 18.3).
const (
	floodSlowConns   = 3000
	floodPosts       = 1000
	floodPostBytes   = 60 << 10
	floodAMPeakLimit = 64 << 20 // bytes of the AM's peak RSS
)

// TestE2EAttackAMFlood: anyone who can reach the AM's port (every user of
// the cluster) floods it while alice's job runs: on every port the AM
// listens on, 3,000 slow connections (request headers trickled a line at a
// time, reopened when the AM drops them) and 1,000 unsigned POSTs of 60 KiB
// (the body held back by one byte for 2 s, then sent whole, again and
// again). The job still registers, runs and reports its exits (SUCCEEDED),
// and the AM's peak RSS (VmHWM of its process on this machine) stays under
// 64 MiB.
//
//	go test -tags e2e -run '^TestE2EAttackAMFlood$' ./cmd/tfyarn/
func TestE2EAttackAMFlood(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	raiseOpenFileLimit(t, 4*(floodSlowConns+floodPosts)+1024)

	dir := clustertest.ContainerDir(t)
	release := filepath.Join(dir, "release")
	name := "e2e-attack-flood-" + randomHex(t)
	run := startHeldRun(t, c, 4*time.Minute, release, bin, "run", "--name", name, "--worker", "2x1c,256m", "--output", "json", "--",
		"sh", "-c", fmt.Sprintf(`touch %s/up.$TFYARN_TASK_INDEX; while [ ! -e %s ]; do sleep 0.2; done`, dir, release))
	appID := waitForRunning(t, c, bin, name)
	pid := amPID(t, appID)
	addrs := listeningAddrs(t, pid)
	require.NotEmpty(t, addrs, "the AM (pid %d) listens on no TCP port", pid)
	t.Logf("AM of %s: pid %d, listening on %v", appID, pid, addrs)

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	stats := make([]*floodStats, len(addrs))
	for i, a := range addrs {
		stats[i] = &floodStats{}
		floodPort(ctx, &wg, a, stats[i])
	}
	defer func() { stop(); wg.Wait() }()

	peak := &peakRSS{pid: pid}
	sampling := make(chan struct{})
	go func() {
		defer close(sampling)
		for peak.sample() {
			time.Sleep(200 * time.Millisecond)
		}
	}()

	// The tasks register and start under the flood; then the flood goes on
	// while they run, and while they end and report.
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; i < 2; i++ {
		for {
			if _, err := os.Stat(filepath.Join(dir, "up."+strconv.Itoa(i))); err == nil {
				break
			}
			require.True(t, time.Now().Before(deadline), "worker:%d did not start within 2m of the flood (the AM's peak RSS so far %d KiB)", i, peak.kib())
			time.Sleep(200 * time.Millisecond)
		}
	}
	time.Sleep(15 * time.Second)
	for i, a := range addrs {
		require.GreaterOrEqual(t, stats[i].slowOpened.Load(), int64(floodSlowConns), "slow connections opened to %s", a)
		require.GreaterOrEqual(t, stats[i].postsSent.Load(), int64(floodPosts), "60 KiB bodies sent to %s", a)
	}
	err := run.finish()
	stop()
	wg.Wait()
	<-sampling

	for i, a := range addrs {
		s := stats[i]
		t.Logf("%s: %d slow connections opened, %d unsigned 60 KiB POSTs sent, answers %s", a, s.slowOpened.Load(), s.postsSent.Load(), s.answers())
	}
	t.Logf("the AM's peak RSS (VmHWM): %d KiB", peak.kib())
	require.NoError(t, err, "tfyarn run under the flood")
	require.Equal(t, "SUCCEEDED", runJSON(t, run.stdout.String()).FinalStatus)
	require.Less(t, peak.kib()*1024, int64(floodAMPeakLimit), "the AM's peak RSS under the flood")
	requireNoStaging(t, c, appID)
}

// raiseOpenFileLimit lifts this process's soft limit on open files to at
// least n (within the hard limit, which must allow it).
func raiseOpenFileLimit(t *testing.T, n uint64) {
	t.Helper()
	var l syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l))
	require.GreaterOrEqual(t, l.Max, n, "the hard limit on open files (ulimit -Hn) is below the %d the flood needs", n)
	if l.Cur < n {
		l.Cur = n
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l))
	}
}

// amPID finds the AM of appID among this machine's processes: the tfyarn
// binary run as `tfyarn am` in the application's first container.
func amPID(t *testing.T, appID string) int {
	t.Helper()
	container := "_" + strings.TrimPrefix(appID, "application_") + "_01_000001"
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		entries, err := os.ReadDir("/proc")
		require.NoError(t, err)
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			cmd, err1 := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			env, err2 := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err1 != nil || err2 != nil {
				continue
			}
			args := strings.Split(string(cmd), "\x00")
			if len(args) < 2 || filepath.Base(args[0]) != "tfyarn" || args[1] != "am" {
				continue
			}
			for _, kv := range strings.Split(string(env), "\x00") {
				if strings.HasPrefix(kv, "CONTAINER_ID=container_") && strings.HasSuffix(kv, container) {
					return pid
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no `tfyarn am` process of %s (container …%s) on this machine within 1m", appID, container)
	return 0
}

// listeningPorts are the TCP ports pid listens on: its sockets' inodes
// among the LISTEN entries of /proc/<pid>/net/tcp and tcp6.
func listeningPorts(t *testing.T, pid int) []int {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	require.NoError(t, err)
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var ports []int
	for _, f := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		require.NoError(t, err)
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			_, port, _ := strings.Cut(fields[1], ":")
			p, err := strconv.ParseInt(port, 16, 32)
			require.NoError(t, err)
			ports = append(ports, int(p))
		}
	}
	return ports
}

// listeningAddrs is listeningPorts with the address each port listens on, to dial: the AM
// listens on its NodeManager's host (127.0.1.x on the test cluster), 127.0.0.1 for a wildcard.
func listeningAddrs(t *testing.T, pid int) []string {
	t.Helper()
	ports := map[int]bool{}
	for _, p := range listeningPorts(t, pid) {
		ports[p] = true
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", pid))
	require.NoError(t, err)
	var addrs []string
	for _, line := range strings.Split(string(data), "\n")[1:] {
		fields := strings.Fields(line)
		if len(fields) < 10 || fields[3] != "0A" {
			continue
		}
		hexIP, hexPort, _ := strings.Cut(fields[1], ":")
		p, err := strconv.ParseInt(hexPort, 16, 32)
		require.NoError(t, err)
		ip, err := strconv.ParseUint(hexIP, 16, 32)
		require.NoError(t, err)
		if !ports[int(p)] {
			continue
		}
		host := net.IPv4(byte(ip), byte(ip>>8), byte(ip>>16), byte(ip>>24)).String() // /proc lists it in host (little-endian) order
		if host == "0.0.0.0" {
			host = "127.0.0.1"
		}
		addrs = append(addrs, net.JoinHostPort(host, strconv.Itoa(int(p))))
		delete(ports, int(p))
	}
	for p := range ports { // an IPv6 socket
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	}
	return addrs
}

// peakRSS follows a process's VmHWM until it exits.
type peakRSS struct {
	pid  int
	peak atomic.Int64 // KiB
}

// sample reads VmHWM once; false once the process is gone.
func (p *peakRSS) sample() bool {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil && kib > p.peak.Load() {
				p.peak.Store(kib)
			}
			return true
		}
	}
	return false
}

func (p *peakRSS) kib() int64 { return p.peak.Load() }

// floodStats counts what the flood of one port did.
type floodStats struct {
	slowOpened atomic.Int64
	postsSent  atomic.Int64
	mu         sync.Mutex
	statuses   map[string]int // first line of each answer to a POST (or the error)
}

func (s *floodStats) answered(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.statuses == nil {
		s.statuses = map[string]int{}
	}
	s.statuses[what]++
}

func (s *floodStats) answers() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprint(s.statuses)
}

// floodPort starts the slow connections and the POSTs against addr until
// ctx ends.
func floodPort(ctx context.Context, wg *sync.WaitGroup, addr string, s *floodStats) {
	d := net.Dialer{Timeout: 5 * time.Second}
	pause := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	for i := 0; i < floodSlowConns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pause(time.Duration(rand.IntN(500)) * time.Millisecond) {
				c, err := d.DialContext(ctx, "tcp", addr)
				if err != nil {
					continue
				}
				s.slowOpened.Add(1)
				_, err = io.WriteString(c, "GET /rendezvous/v1/spec?task=worker:0 HTTP/1.1\r\nHost: am\r\n")
				for err == nil && pause(2*time.Second) {
					_, err = io.WriteString(c, "X-Slow: 1\r\n")
				}
				c.Close()
			}
		}()
	}
	body := strings.Repeat("x", floodPostBytes)
	head := fmt.Sprintf("POST /rendezvous/v1/register HTTP/1.1\r\nHost: am\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", floodPostBytes)
	for i := 0; i < floodPosts; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pause(time.Duration(rand.IntN(500)) * time.Millisecond) {
				c, err := d.DialContext(ctx, "tcp", addr)
				if err != nil {
					s.answered("dial: " + err.Error())
					continue
				}
				s.postsSent.Add(1)
				_, err = io.WriteString(c, head+body[:len(body)-1])
				if err == nil && pause(2*time.Second) {
					_, err = io.WriteString(c, body[len(body)-1:])
				}
				if err != nil {
					s.answered("write refused")
				} else {
					_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
					line, err := bufio.NewReader(c).ReadString('\n')
					if err != nil {
						s.answered("no answer")
					} else {
						s.answered(strings.TrimSpace(line))
					}
				}
				c.Close()
			}
		}()
	}
}
