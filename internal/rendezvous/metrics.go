package rendezvous

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"unicode"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Metrics: while its program runs, a launcher may send the AM what it
// samples of its container (its GPUs; its program's CPU and memory). The AM keeps the last sample
// per task for its status report and web UI. Best effort both ways: an AM
// whose Handler is no MetricsHandler answers 404 (ErrNotServed).

// MaxGPUs bounds the GPUs one metrics report may list.
const MaxGPUs = 64

// Bounds of a process sample: 4096 cores busy, a century of CPU time,
// 1 PiB, 4 Mi processes (Linux's pid_max).
const (
	maxCPUPercent = 4096 * 100
	maxCPUSeconds = 4096 * 100 * 365 * 24 * 3600
	maxRSSBytes   = 1 << 50
	maxProcesses  = 1 << 22
)

// MetricsReport is one sample of a task's container.
type MetricsReport struct {
	Task        taskspec.TaskID
	ContainerID string
	GPUs        []contract.GPUSample
	// Progress, when set, is what the program last wrote to its progress
	// file. The launcher sends it alone, as it changes (GPUs nil): the AM
	// keeps each part of a task's metrics from the last report that had it.
	Progress *contract.Progress
	// Process, when set, is the program's CPU and memory, sent alone
	// (GPUs nil) as well.
	Process *contract.ProcessSample
}

// MetricsHandler is what a Handler implements to receive metrics.
type MetricsHandler interface {
	ReportMetrics(ctx context.Context, m MetricsReport) error
}

type wireMetrics struct {
	Task        string                  `json:"task"`
	ContainerID string                  `json:"container_id,omitempty"`
	GPUs        []contract.GPUSample    `json:"gpus"`
	Progress    *contract.Progress      `json:"progress,omitempty"`
	Process     *contract.ProcessSample `json:"process,omitempty"`
}

func encodeMetrics(m MetricsReport) []byte {
	return mustJSON(wireMetrics{Task: m.Task.String(), ContainerID: m.ContainerID, GPUs: m.GPUs, Progress: m.Progress, Process: m.Process})
}

// DecodeMetrics parses and validates a metrics body: every count and
// length bounded, numbers in range, names printable.
func DecodeMetrics(body []byte) (MetricsReport, error) {
	var w wireMetrics
	if err := decodeJSON(body, &w); err != nil {
		return MetricsReport{}, fmt.Errorf("metrics: %w", err)
	}
	task, err := parseTask(w.Task)
	if err != nil {
		return MetricsReport{}, fmt.Errorf("metrics: %w", err)
	}
	if err := checkID("container id", w.ContainerID); err != nil {
		return MetricsReport{}, fmt.Errorf("metrics of %s: %w", task, err)
	}
	if len(w.GPUs) > MaxGPUs {
		return MetricsReport{}, fmt.Errorf("metrics of %s: %d GPUs, at most %d", task, len(w.GPUs), MaxGPUs)
	}
	for _, g := range w.GPUs {
		switch {
		case g.Index < 0 || g.Index > 1<<16:
			return MetricsReport{}, fmt.Errorf("metrics of %s: GPU index %d", task, g.Index)
		case g.UtilizationPct < 0 || g.UtilizationPct > 100:
			return MetricsReport{}, fmt.Errorf("metrics of %s: GPU %d utilisation %d%%", task, g.Index, g.UtilizationPct)
		case g.MemoryUsedMiB < 0 || g.MemoryTotalMiB < 0 || g.MemoryUsedMiB > 1<<40 || g.MemoryTotalMiB > 1<<40:
			return MetricsReport{}, fmt.Errorf("metrics of %s: GPU %d memory out of range", task, g.Index)
		case len(g.Name) > maxIDLen || strings.ContainsFunc(g.Name, func(r rune) bool { return !unicode.IsPrint(r) }):
			return MetricsReport{}, fmt.Errorf("metrics of %s: malformed GPU name", task)
		}
	}
	if w.Progress != nil {
		if err := contract.CheckProgress(*w.Progress); err != nil {
			return MetricsReport{}, fmt.Errorf("metrics of %s: %w", task, err)
		}
	}
	if p := w.Process; p != nil {
		switch {
		case p.CPUPercent < 0 || p.CPUPercent > maxCPUPercent || p.CPUSeconds < 0 || p.CPUSeconds > maxCPUSeconds:
			return MetricsReport{}, fmt.Errorf("metrics of %s: CPU out of range", task)
		case p.RSSBytes < 0 || p.PeakRSSBytes < 0 || p.RSSBytes > maxRSSBytes || p.PeakRSSBytes > maxRSSBytes:
			return MetricsReport{}, fmt.Errorf("metrics of %s: memory out of range", task)
		case p.Processes < 0 || p.Processes > maxProcesses:
			return MetricsReport{}, fmt.Errorf("metrics of %s: %d processes", task, p.Processes)
		}
	}
	return MetricsReport{Task: task, ContainerID: w.ContainerID, GPUs: w.GPUs, Progress: w.Progress, Process: w.Process}, nil
}

// ReportMetrics sends one sample to the AM. Bound ctx: metrics are best
// effort.
func (c *Client) ReportMetrics(ctx context.Context, m MetricsReport) error {
	if _, _, err := c.call(ctx, http.MethodPost, "metrics", nil, encodeMetrics(m), 0); err != nil {
		return fmt.Errorf("rendezvous: reporting the metrics of %s: %w", m.Task, err)
	}
	return nil
}

func (s *Server) servesMetrics() bool {
	_, ok := s.h.(MetricsHandler)
	return ok
}

func (s *Server) metrics(ctx context.Context, resp responder, container string, body []byte) {
	m, err := DecodeMetrics(body)
	if err != nil {
		resp.fail(http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	if !s.bound(resp, "metrics", m.Task, m.ContainerID, container) {
		return
	}
	if err := s.h.(MetricsHandler).ReportMetrics(ctx, m); err != nil {
		resp.handlerError(err)
		return
	}
	resp.ok(http.StatusOK, []byte("{}"))
}
