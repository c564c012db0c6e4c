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
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/connlimit"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestRendezvousOfManyLaunchers: 1,500 launchers of one task type, more
// than the 1,000 instances a type was once limited to, all register and
// get the spec through the AM's connection bounds (the larger runs are
// TestBenchRendezvousScale, bench/results/scale-sim.md).
func TestRendezvousOfManyLaunchers(t *testing.T) {
	r := rendezvousAtScale(t, 1500)
	require.Equal(t, 1500, r.specWorkers, "workers in the spec launcher 0 got")
}

type scaleResult struct {
	registered, specs, cpu time.Duration
	specBytes, specWorkers int
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
	untrusted := StrangerBound(n)
	if v, err := strconv.Atoi(os.Getenv("BENCH_RDV_UNTRUSTED")); err == nil {
		untrusted = v
	}
	ln := connlimit.NewListener(raw, untrusted, max(DefaultMaxAuthenticatedConns, 8*n))
	hs := HTTPServer(srv, slog.New(slog.NewTextHandler(io.Discard, nil)))
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	addr := raw.Addr().String()

	stopSampling := sampleRuntime()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cpu0 := processCPU()
	start := time.Now()
	var registered sync.WaitGroup
	var lastReg, lastSpec atomic.Int64
	var specBytes, specWorkers atomic.Int64
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
				specWorkers.Store(int64(len(spec[taskspec.Worker])))
			}
		}(i)
	}
	registered.Wait()
	regAt := time.Duration(lastReg.Load())
	done.Wait()
	specsAt := time.Since(start)
	cpu := processCPU() - cpu0
	heapPeak, goroutinesPeak := stopSampling()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return scaleResult{registered: regAt, specs: specsAt, cpu: cpu, specBytes: int(specBytes.Load()), specWorkers: int(specWorkers.Load()),
		evicted: ln.Evicted(), heapPeakMiB: float64(heapPeak) / (1 << 20), goroutinesPeak: goroutinesPeak}
}

// processCPU is this process's user+system CPU so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sampleRuntime samples the heap in use and the goroutines every 100 ms
// until the function it returns is called, which returns their peaks.
func sampleRuntime() func() (heapPeak uint64, goroutinesPeak int) {
	stop, sampled := make(chan struct{}), make(chan struct{})
	var heapPeak uint64
	var goroutinesPeak int
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			heapPeak = max(heapPeak, ms.HeapInuse)
			goroutinesPeak = max(goroutinesPeak, runtime.NumGoroutine())
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() (uint64, int) {
		close(stop)
		<-sampled
		return heapPeak, goroutinesPeak
	}
}
