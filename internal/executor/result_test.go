package executor

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// resultAM is a Board that keeps the results it is sent and what it had been told of the
// task's exit when each chunk came.
type resultAM struct {
	*rendezvous.Board
	mu         sync.Mutex
	data       []byte
	tooLarge   int64
	exitBefore bool
}

func (r *resultAM) SaveResult(_ context.Context, c rendezvous.ResultChunk) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, exited := r.Exit(c.Task)
	r.exitBefore = r.exitBefore || exited
	r.data = append(r.data, c.Data...)
	r.tooLarge = c.TooLarge
	return nil
}

func startResultAM(t *testing.T) (*am, *resultAM) {
	t.Helper()
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	board, err := rendezvous.NewBoard(rendezvous.BoardConfig{Groups: []taskspec.TaskGroup{group(taskspec.Worker, 1)}})
	require.NoError(t, err)
	h := &resultAM{Board: board}
	srv, err := rendezvous.NewServer(secret, h)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { _ = srv.Serve(ctx, ln); close(served) }()
	t.Cleanup(func() { cancel(); <-served; board.Close() })
	return &am{board: board, addr: ln.Addr().String(), secret: secret}, h
}

// TestResultIsSentBeforeTheExit: what the program wrote to TFYARN_RESULT_FILE (a path in its
// working directory) reaches the AM when it exits, failed or not, before the exit report.
func TestResultIsSentBeforeTheExit(t *testing.T) {
	a, h := startResultAM(t)
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `printf 'bytes\000\377' > "$TFYARN_RESULT_FILE"; echo "$TFYARN_RESULT_FILE"; exit 3`)
	l.cfg.Dir = t.TempDir()
	o := l.run(t)
	require.NoError(t, o.err)
	require.Equal(t, 3, o.code)
	require.Equal(t, filepath.Join(l.cfg.Dir, contract.ResultFileName("worker", 0))+"\n", l.stdout.String())
	require.Equal(t, "bytes\x00\xff", string(h.data))
	require.False(t, h.exitBefore, "the result comes before the exit report")
}

// TestResultTooLarge: a result file over 64 MiB is not sent; the task's log and the AM are told.
func TestResultTooLarge(t *testing.T) {
	a, h := startResultAM(t)
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `truncate -s 67108865 "$TFYARN_RESULT_FILE"`)
	l.cfg.Dir = t.TempDir()
	o := l.run(t)
	require.NoError(t, o.err)
	require.Equal(t, 0, o.code)
	require.Empty(t, h.data)
	require.Equal(t, int64(contract.MaxResultBytes+1), h.tooLarge)
	require.Contains(t, l.stderr.String(), "the result file is not saved: 67108865 bytes, over the limit of 67108864 (64 MiB)")
}

// TestKeepResult: run --local's launchers leave the result file where the program wrote it, in
// ResultDir, and send nothing; a stale one is removed before the program starts.
func TestKeepResult(t *testing.T) {
	a, h := startResultAM(t)
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", `test ! -e "$TFYARN_RESULT_FILE" && echo fresh > "$TFYARN_RESULT_FILE"`)
	l.cfg.Dir, l.cfg.ResultDir, l.cfg.KeepResult = t.TempDir(), t.TempDir(), true
	path := filepath.Join(l.cfg.ResultDir, contract.ResultFileName("worker", 0))
	require.NoError(t, os.WriteFile(path, []byte("stale"), 0o600))
	o := l.run(t)
	require.NoError(t, o.err)
	require.Equal(t, 0, o.code, l.stderr.String())
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "fresh\n", string(got))
	require.Empty(t, h.data)
}
