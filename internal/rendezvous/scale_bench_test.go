//go:build bench

package rendezvous

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/connlimit"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestBenchRendezvousScale is the rendezvous of a job of N workers as the
// ApplicationMaster serves it (its connlimit bounds: rendezvous.
// MaxUnauthenticatedConns strangers, max(DefaultMaxAuthenticatedConns,
// 8×N) launchers), with N simulated launchers over loopback, each one
// Client as `tfyarn task` makes it: register, then long-poll the spec,
// all at once. It measures the time to all registered and to every spec
// received, the connections evicted, and the process's CPU and heap.
// bench/results/scale-sim.md; BENCH_RDV_TASKS="1000 5000" by default.
//
//	go test -tags bench -run TestBenchRendezvousScale -v ./internal/rendezvous/
func TestBenchRendezvousScale(t *testing.T) {
	sizes := []int{1000, 5000}
	if s := os.Getenv("BENCH_RDV_TASKS"); s != "" {
		sizes = nil
		for _, f := range strings.Fields(s) {
			n, err := strconv.Atoi(f)
			require.NoError(t, err)
			sizes = append(sizes, n)
		}
	}
	t.Logf("load before: %s", loadAvg1())
	for _, n := range sizes {
		r := rendezvousAtScale(t, n)
		t.Logf("tasks=%d all_registered=%.2fs all_specs=%.2fs spec_bytes=%d evicted=%d cpu=%.2fs heap_peak_mib=%.1f goroutines_peak=%d load=%s",
			n, r.registered.Seconds(), r.specs.Seconds(), r.specBytes, r.evicted, r.cpu.Seconds(), r.heapPeakMiB, r.goroutinesPeak, loadAvg1())
	}
}

type scaleResult struct {
	registered, specs, cpu time.Duration
	specBytes              int
	evicted                int64
	heapPeakMiB            float64
	goroutinesPeak         int
}

func rendezvousAtScale(t *testing.T, n int) scaleResult {
	secret := testSecret(t)
	board, err := NewBoard(BoardConfig{Groups: []taskspec.TaskGroup{group(taskspec.Worker, n)}, RegistrationTimeout: 5 * time.Minute, RequireAssignment: true})
	require.NoError(t, err)
	defer board.Close()
	containers := make([]string, n)
	for i := range containers {
		containers[i] = fmt.Sprintf("container_1795954994953_0001_01_%06d", i+2)
		board.Assign(task(taskspec.Worker, i), containers[i])
	}
	srv, err := NewServer(secret, board, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	// As internal/appmaster/rendezvous.go bounds the AM's listener.
	untrusted := MaxUnauthenticatedConns
	if v, err := strconv.Atoi(os.Getenv("BENCH_RDV_UNTRUSTED")); err == nil {
		untrusted = v
	}
	ln := connlimit.NewListener(raw, untrusted, max(DefaultMaxAuthenticatedConns, 8*n))
	hs := HTTPServer(srv, slog.New(slog.NewTextHandler(io.Discard, nil)))
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	addr := raw.Addr().String()

	stopSampling := make(chan struct{})
	var heapPeak uint64
	var goroutinesPeak int
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			heapPeak = max(heapPeak, ms.HeapInuse)
			goroutinesPeak = max(goroutinesPeak, runtime.NumGoroutine())
			select {
			case <-stopSampling:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cpu0 := processCPU()
	start := time.Now()
	var registered sync.WaitGroup
	var lastReg, lastSpec atomic.Int64
	var specBytes atomic.Int64
	errs := make(chan error, n)
	var done sync.WaitGroup
	registered.Add(n)
	done.Add(n)
	for i := 0; i < n; i++ {
		go func(i int) {
			defer done.Done()
			c, err := NewClient(addr, containers[i], ContainerKey(secret, containers[i]))
			if err != nil {
				registered.Done()
				errs <- err
				return
			}
			defer c.Close()
			err = c.Register(ctx, Registration{Task: task(taskspec.Worker, i), Host: fmt.Sprintf("node%04d.example.com", i/8), Port: 20000 + i, ContainerID: containers[i]})
			lastReg.Store(int64(time.Since(start)))
			registered.Done()
			if err != nil {
				errs <- err
				return
			}
			spec, err := c.WaitSpec(ctx, task(taskspec.Worker, i))
			lastSpec.Store(max(lastSpec.Load(), int64(time.Since(start))))
			if err != nil {
				errs <- err
				return
			}
			if i == 0 {
				specBytes.Store(int64(len(mustJSON(spec))))
			}
		}(i)
	}
	registered.Wait()
	regAt := time.Duration(lastReg.Load())
	done.Wait()
	specsAt := time.Since(start)
	cpu := processCPU() - cpu0
	close(stopSampling)
	<-sampled
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return scaleResult{registered: regAt, specs: specsAt, cpu: cpu, specBytes: int(specBytes.Load()),
		evicted: ln.Evicted(), heapPeakMiB: float64(heapPeak) / (1 << 20), goroutinesPeak: goroutinesPeak}
}

// processCPU is this process's user+system CPU so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadAvg1() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
