package cliout

import (
	"fmt"
	"strings"
	"time"
)

// The cells a job's report shows, in the same words in `tfyarn status` and
// on the AM's web page: each side hands its own report types' values here.

// Duration renders d to the second: "42s", "3m05s", "1h02m03s".
func Duration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	default:
		return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
	}
}

// Memory renders n bytes in MiB below a GiB, else in GiB: "240 MiB", "1.5 GiB".
func Memory(n int64) string {
	if n < 1<<30 {
		return fmt.Sprintf("%d MiB", (n+1<<19)>>20)
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// Process is what ProcessText sums up: a task's program as last sampled,
// and its container's memory limit.
type Process struct {
	CPUPercent             float64
	RSSBytes, PeakRSSBytes int64
	NearMemoryLimit        bool // the peak came near MemoryLimitBytes
	MemoryLimitBytes       int64
}

// ProcessText sums a task's program up in one cell: its CPU over the last
// interval, its RSS and peak RSS, "87% 1.2 GiB (peak 1.5 GiB)", and when
// its peak came near the container's memory, "; near its 2.0 GiB limit";
// "-" before the first sample (p nil).
func ProcessText(p *Process) string {
	if p == nil {
		return "-"
	}
	s := fmt.Sprintf("%.0f%% %s (peak %s)", p.CPUPercent, Memory(p.RSSBytes), Memory(p.PeakRSSBytes))
	if p.NearMemoryLimit {
		s += fmt.Sprintf("; near its %s limit", Memory(p.MemoryLimitBytes))
	}
	return s
}

// GPU is one GPU of a task as last sampled.
type GPU struct {
	Index, UtilizationPct         int
	MemoryUsedMiB, MemoryTotalMiB int64
}

// GPUText sums a task's GPUs up in one cell: "0: 87% 61234/81559 MiB; 1: ...",
// "-" when none were sampled.
func GPUText(gpus []GPU) string {
	if len(gpus) == 0 {
		return "-"
	}
	parts := make([]string, len(gpus))
	for i, g := range gpus {
		parts[i] = fmt.Sprintf("%d: %d%% %d/%d MiB", g.Index, g.UtilizationPct, g.MemoryUsedMiB, g.MemoryTotalMiB)
	}
	return strings.Join(parts, "; ")
}

// Progress is the job's training progress: that of Task, with its rate
// (in steps, or in fraction of the whole) and the time left, when known.
type Progress struct {
	Fraction                                      float64
	Step, Total                                   int64
	Task                                          string
	StepsPerSecond, FractionPerSecond, ETASeconds *float64
}

// ProgressText sums the job's training progress up in one cell: "12.0%
// (120/1000, worker:0) · 10.5 steps/s · ETA 1m28s"; "-" before any program
// reported (p nil).
func ProgressText(p *Progress) string {
	if p == nil {
		return "-"
	}
	s := fmt.Sprintf("%.1f%%", 100*p.Fraction)
	if p.Total > 0 {
		s += fmt.Sprintf(" (%d/%d, %s)", p.Step, p.Total, p.Task)
	} else {
		s += " (" + p.Task + ")"
	}
	switch {
	case p.StepsPerSecond != nil:
		s += fmt.Sprintf(" · %.3g steps/s", *p.StepsPerSecond)
	case p.FractionPerSecond != nil:
		s += fmt.Sprintf(" · %.3g%%/s", 100**p.FractionPerSecond)
	}
	if p.ETASeconds != nil {
		s += " · ETA " + Duration(time.Duration(*p.ETASeconds)*time.Second)
	}
	return s
}
