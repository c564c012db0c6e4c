package rendezvous

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/contract"
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

	// A Handler without metrics (an older AM) answers "not served".
	plain := startServer(t, secret, newBoard(t, time.Minute, group(taskspec.Worker, 1)))
	c2 := newTestClient(t, plain.addr, secret, m.ContainerID)
	require.ErrorIs(t, c2.ReportMetrics(ctx, m), ErrNotServed)
}
