package rendezvous

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

type resultBoard struct {
	*Board
	mu  sync.Mutex
	got []ResultChunk
}

func (b *resultBoard) SaveResult(_ context.Context, c ResultChunk) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.got = append(b.got, c)
	return nil
}

// TestSendResult: a result travels in chunks of at most ResultChunkBytes, in order, the last
// marked; an empty one is one empty last chunk; a too-large file is one notice of its size.
func TestSendResult(t *testing.T) {
	secret := testSecret(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const container = "container_1_0001_01_000002"
	w0 := task(taskspec.Worker, 0)
	h := &resultBoard{Board: newBoard(t, time.Minute, group(taskspec.Worker, 1))}
	srv := startServer(t, secret, h)
	c := newTestClient(t, srv.addr, secret, container)

	data := bytes.Repeat([]byte("0123456789abcdef\x00\xff"), 2*ResultChunkBytes/18+5) // 2 chunks and a bit
	require.NoError(t, c.SendResult(ctx, w0, container, data, 0))
	require.Len(t, h.got, 3)
	var joined []byte
	for i, ch := range h.got {
		require.Equal(t, int64(len(joined)), ch.Offset)
		require.Equal(t, i == 2, ch.Last)
		require.LessOrEqual(t, len(ch.Data), ResultChunkBytes)
		joined = append(joined, ch.Data...)
	}
	require.Equal(t, data, joined)

	h.got = nil
	require.NoError(t, c.SendResult(ctx, w0, container, nil, 0))
	require.Equal(t, []ResultChunk{{Task: w0, ContainerID: container, Last: true}}, h.got)

	h.got = nil
	require.NoError(t, c.SendResult(ctx, w0, container, nil, contract.MaxResultBytes+1))
	require.Equal(t, []ResultChunk{{Task: w0, ContainerID: container, Last: true, TooLarge: contract.MaxResultBytes + 1}}, h.got)

	// Another container's key cannot send worker:0's result once it is assigned elsewhere.
	h.Assign(w0, container)
	other := newTestClient(t, srv.addr, secret, "container_1_0001_01_000003")
	require.ErrorIs(t, other.SendResult(ctx, w0, "container_1_0001_01_000003", []byte("x"), 0), ErrForbidden)
}

func TestDecodeResultChunkRefuses(t *testing.T) {
	for _, body := range []string{
		`{"task":"worker:0","offset":-1}`,
		`{"task":"worker:0","offset":67108864,"data":"eA=="}`,
		`{"task":"worker:0","too_large":100,"last":true}`,
		`{"task":"worker:0","too_large":67108865,"data":"eA==","last":true}`,
		`{"task":"worker:0","too_large":67108865}`,
		`{"task":"worker 0"}`,
	} {
		_, err := DecodeResultChunk([]byte(body))
		require.Error(t, err, body)
	}
	big := encodeResult(ResultChunk{Task: task(taskspec.Worker, 0), Data: make([]byte, ResultChunkBytes+1)})
	_, err := DecodeResultChunk(big)
	require.Error(t, err)
}

// TestResultNotServed: an AM whose handler keeps no results answers 404.
func TestResultNotServed(t *testing.T) {
	secret := testSecret(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv := startServer(t, secret, newBoard(t, time.Minute, group(taskspec.Worker, 1)))
	c := newTestClient(t, srv.addr, secret, "container_1_0001_01_000002")
	require.ErrorIs(t, c.SendResult(ctx, task(taskspec.Worker, 0), "container_1_0001_01_000002", []byte("x"), 0), ErrNotServed)
}
