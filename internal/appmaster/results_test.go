package appmaster

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestResultSpool: chunks in order make one result, saved once, whole; a chunk sent again (a
// retried request) is ignored, one out of order refused; a too-large notice and a failed save
// are in the report, in one line.
func TestResultSpool(t *testing.T) {
	var page statusPage
	page.init("application_1_0001", "alice", taskspec.Job{Tasks: []taskspec.TaskGroup{{Type: taskspec.Worker, Instances: 2}}})
	saved := map[taskspec.TaskID][]byte{}
	var failSave error
	save := func(_ context.Context, task taskspec.TaskID, f *os.File) error {
		if failSave != nil {
			return failSave
		}
		data, err := io.ReadAll(f) // the spool hands the file at its start
		saved[task] = data
		return err
	}
	dir := t.TempDir()
	s := newResultSpool(dir, save, &page, t.Logf)
	ctx := context.Background()
	w0, w1 := taskspec.TaskID{Type: taskspec.Worker, Index: 0}, taskspec.TaskID{Type: taskspec.Worker, Index: 1}
	const c0 = "container_1_0001_01_000002"
	chunk := func(off int64, data string, last bool) rendezvous.ResultChunk {
		return rendezvous.ResultChunk{Task: w0, ContainerID: c0, Offset: off, Data: []byte(data), Last: last}
	}
	require.NoError(t, s.receive(ctx, chunk(0, "hello ", false)))
	require.NoError(t, s.receive(ctx, chunk(0, "hello ", false)), "a retried chunk")
	require.ErrorIs(t, s.receive(ctx, chunk(9, "x", false)), rendezvous.ErrBadRequest)
	require.NoError(t, s.receive(ctx, chunk(6, "world", true)))
	require.Equal(t, "hello world", string(saved[w0]))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the spool file is removed once saved")

	require.NoError(t, s.receive(ctx, rendezvous.ResultChunk{Task: w1, Last: true, TooLarge: 70 << 20}))
	rep := page.currentReport()
	require.Equal(t, int64(11), *rep.Tasks[0].ResultBytes)
	require.Equal(t, "worker:1's result file is 73400320 bytes, over the limit of 67108864 (64 MiB): not saved", rep.Tasks[1].ResultNotSaved)

	failSave = errors.New("hdfs: permission denied")
	require.NoError(t, s.receive(ctx, chunk(0, "again", true)))
	require.Equal(t, "worker:0's result (5 bytes) was not saved: hdfs: permission denied", page.currentReport().Tasks[0].ResultNotSaved)

	require.ErrorIs(t, s.receive(ctx, rendezvous.ResultChunk{Task: taskspec.TaskID{Type: taskspec.PS, Index: 0}, Last: true}), rendezvous.ErrUnknownTask)
}
