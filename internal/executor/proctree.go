package executor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/pause"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
)

// Process sampling: while the program runs, the launcher reads its whole
// process tree from /proc (the processes orphans.go finds: the launcher's
// descendants carrying this launch's mark or in the program's group) every
// processInterval, the GPU metrics' interval, and sends the AM the tree's
// CPU time and share over the interval, its resident memory and the most
// it was seen to hold. The first sample comes after processFirst, so that
// a short program is seen too.
const (
	processInterval = gpuInterval
	processFirst    = time.Second
	// clockTicks is Linux's USER_HZ, the unit of /proc/PID/stat's times:
	// 100 on every architecture Go builds tfyarn for.
	clockTicks = 100
)

// procUsage is one process's line of /proc: CPU ticks and resident pages.
type procUsage struct {
	ticks    uint64
	rssPages int64
}

// treeSampler keeps what the next sample needs of the last: the time and
// CPU ticks then, and the peak so far.
type treeSampler struct {
	list     func() []int // the tree's processes now
	pageSize int64
	lastAt   time.Time
	lastTick uint64
	peak     int64
	// hwmEvery reads VmHWM (a second file per process) every this many
	// samples only: it catches a peak between samples, and a peak that
	// short is rare enough to learn a little later.
	hwmEvery, n int
}

func newTreeSampler(mark string, pgid int, start time.Time) *treeSampler {
	root := os.Getpid()
	return &treeSampler{
		list:     func() []int { return descendants(root, mark, pgid) },
		pageSize: int64(os.Getpagesize()),
		lastAt:   start,
		hwmEvery: 1,
	}
}

// sample reads the tree once. CPU share is over the time since the last
// sample (since the program's start for the first); a process that ended
// since takes its CPU time with it, so the share never goes below 0.
func (s *treeSampler) sample(now time.Time) contract.ProcessSample {
	pids := s.list()
	var ticks uint64
	var rss, hwm int64
	readHWM := s.hwmEvery > 0 && s.n%s.hwmEvery == 0
	s.n++
	for _, pid := range pids {
		u, ok := readUsage(pid)
		if !ok {
			continue
		}
		ticks += u.ticks
		rss += u.rssPages * s.pageSize
		if readHWM {
			hwm = max(hwm, readHWMBytes(pid))
		}
	}
	out := contract.ProcessSample{
		CPUSeconds: float64(ticks) / clockTicks,
		RSSBytes:   rss,
		Processes:  len(pids),
	}
	if wall := now.Sub(s.lastAt).Seconds(); wall > 0 && ticks > s.lastTick {
		out.CPUPercent = float64(ticks-s.lastTick) / clockTicks / wall * 100
	}
	s.lastAt, s.lastTick = now, ticks
	s.peak = max(s.peak, rss, hwm)
	out.PeakRSSBytes = s.peak
	return out
}

// readUsage reads /proc/PID/stat: utime, stime and the times of reaped
// children (cutime, cstime: a shell's finished commands count), rss.
func readUsage(pid int) (procUsage, bool) {
	f := statFields(pid)
	// After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13)
	// cstime(14) ... rss(21).
	if len(f) < 22 {
		return procUsage{}, false
	}
	var ticks uint64
	for _, i := range []int{11, 12, 13, 14} {
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return procUsage{}, false
		}
		ticks += v
	}
	pages, err := strconv.ParseInt(f[21], 10, 64)
	if err != nil || pages < 0 {
		return procUsage{}, false
	}
	return procUsage{ticks: ticks, rssPages: pages}, true
}

// readHWMBytes is /proc/PID/status's VmHWM (a process's peak RSS), 0 when
// it cannot be read.
func readHWMBytes(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	return parseHWM(data)
}

// parseHWM finds "VmHWM:  1234 kB" in a status file.
func parseHWM(status []byte) int64 {
	i := bytes.Index(status, []byte("\nVmHWM:"))
	if i < 0 {
		return 0
	}
	line := status[i+len("\nVmHWM:"):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	f := bytes.Fields(line)
	if len(f) != 2 || string(f[1]) != "kB" {
		return 0
	}
	kb, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil || kb < 0 {
		return 0
	}
	return kb << 10
}

// sampleProcesses reports the program's tree after first, then every
// interval, until ctx ends. A failing report is logged once (the AM may be
// busy); sampling goes on. An AM that takes no metrics (an older one, or
// --local's rendezvous) ends the sampling without a word.
func sampleProcesses(ctx context.Context, s *treeSampler, first, interval time.Duration, send func(context.Context, contract.ProcessSample) error, log *logger) {
	wait := first
	sentErr := false
	for {
		if pause.For(ctx, wait) != nil {
			return
		}
		wait = interval
		sample := s.sample(time.Now())
		sctx, cancel := context.WithTimeout(ctx, gpuQueryTimeout)
		err := send(sctx, sample)
		cancel()
		if errors.Is(err, rendezvous.ErrNotServed) {
			return
		}
		if err != nil && ctx.Err() == nil && !sentErr {
			sentErr = true
			log.printf("could not report CPU and memory metrics to the AM: %v", err)
		}
	}
}
