package rendezvous

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

type metricsBoard struct {
	*Board
	mu  sync.Mutex
	got []MetricsReport
}

func (b *metricsBoard) ReportMetrics(_ context.Context, m MetricsReport) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, m)
	return nil
}

func TestMetrics(t *testing.T) {
	secret := testSecret(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m := MetricsReport{Task: task(taskspec.Worker, 0), ContainerID: "container_1_0001_01_000002",
		GPUs: []contract.GPUSample{{Index: 0, Name: "NVIDIA H100 80GB HBM3", UtilizationPct: 75, MemoryUsedMiB: 1011, MemoryTotalMiB: 81559}}}

	h := &metricsBoard{Board: newBoard(t, time.Minute, group(taskspec.Worker, 1))}
	srv := startServer(t, secret, h)
	c := newTestClient(t, srv.addr, secret, m.ContainerID)
	require.NoError(t, c.ReportMetrics(ctx, m))
	require.Equal(t, []MetricsReport{m}, h.got)

	bad := m
	bad.GPUs = []contract.GPUSample{{UtilizationPct: 101}}
	require.ErrorIs(t, c.ReportMetrics(ctx, bad), ErrBadRequest)

	// Progress travels alone, GPUs nil; a progress out of range is refused.
	prog := MetricsReport{Task: m.Task, ContainerID: m.ContainerID, Progress: &contract.Progress{Fraction: 0.12, Step: 120, Total: 1000}}
	require.NoError(t, c.ReportMetrics(ctx, prog))
	require.Equal(t, []MetricsReport{m, prog}, h.got)
	for _, p := range []contract.Progress{{Fraction: 1.5}, {Fraction: 0.5, Step: 3, Total: 2}, {Fraction: 0.5, Step: 1, Total: 10}, {Step: 1}, {Fraction: -0.1}} {
		bad := prog
		bad.Progress = &p
		require.ErrorIs(t, c.ReportMetrics(ctx, bad), ErrBadRequest, "%+v", p)
	}
	// The program's CPU and memory travel in their own report.
	p := MetricsReport{Task: m.Task, ContainerID: m.ContainerID,
		Process: &contract.ProcessSample{CPUPercent: 187.5, CPUSeconds: 12.25, RSSBytes: 157286400, PeakRSSBytes: 160000000, Processes: 3}}
	require.NoError(t, c.ReportMetrics(ctx, p))
	require.Equal(t, []MetricsReport{m, prog, p}, h.got)
	for _, bad := range []contract.ProcessSample{{RSSBytes: -1}, {PeakRSSBytes: maxRSSBytes + 1}, {CPUPercent: -1}, {CPUPercent: maxCPUPercent + 1}, {Processes: maxProcesses + 1}, {CPUSeconds: -1}} {
		require.ErrorIs(t, c.ReportMetrics(ctx, MetricsReport{Task: m.Task, ContainerID: m.ContainerID, Process: &bad}), ErrBadRequest, "%+v", bad)
	}

	// A Handler without metrics (an older AM) answers "not served".
	plain := startServer(t, secret, newBoard(t, time.Minute, group(taskspec.Worker, 1)))
	c2 := newTestClient(t, plain.addr, secret, m.ContainerID)
	require.ErrorIs(t, c2.ReportMetrics(ctx, m), ErrNotServed)
}
