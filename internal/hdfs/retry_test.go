package hdfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// failingWriter accepts limit bytes, then fails the way a broken DataNode
// pipeline surfaces through colinmarc/hdfs.
type failingWriter struct {
	limit int
	buf   bytes.Buffer
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.limit {
		return 0, syscall.EPIPE
	}
	return w.buf.Write(p)
}

// fakeRemote injects per-attempt writers into writeTempRetrying.
type fakeRemote struct {
	fails   int // attempts that break mid-stream
	tmps    []string
	removed []string
	files   map[string][]byte
}

func (f *fakeRemote) write(ctx context.Context, dir, tmp string, src io.Reader) (written, error) {
	f.tmps = append(f.tmps, tmp)
	limit := 1 << 62
	if len(f.tmps) <= f.fails {
		limit = 3 << 20 // break after 3 MiB
	}
	w := &failingWriter{limit: limit}
	h := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(w, h), src, make([]byte, copyChunk))
	if err != nil {
		return written{}, err
	}
	if f.files == nil {
		f.files = map[string][]byte{}
	}
	f.files[tmp] = w.buf.Bytes()
	return written{size: n, digest: hex.EncodeToString(h.Sum(nil))}, nil
}

func (f *fakeRemote) remove(p string) { f.removed = append(f.removed, p) }

func payload(n int) ([]byte, func() (io.ReadCloser, error)) {
	data := bytes.Repeat([]byte("0123456789abcdef"), n/16)
	return data, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
}

func TestRetryAfterBrokenPipeline(t *testing.T) {
	data, open := payload(8 << 20)
	f := &fakeRemote{fails: 2}
	var calls [][2]int64
	opts := UploadOptions{Backoff: time.Millisecond, Progress: func(s, n int64) { calls = append(calls, [2]int64{s, n}) }}
	tmp, w, err := writeTempRetrying(context.Background(), "/c/d", "env.tar.gz", int64(len(data)), open, opts, f.write, f.remove)
	require.NoError(t, err)
	require.Len(t, f.tmps, 3)
	require.Equal(t, f.tmps[2], tmp)
	require.Equal(t, f.tmps[:2], f.removed, "each failed attempt's temporary file is removed")
	for _, p := range f.tmps {
		require.Equal(t, "/c/d", path.Dir(p))
		require.True(t, isTempName(path.Base(p)), p)
	}
	require.NotEqual(t, f.tmps[0], f.tmps[1], "each attempt writes a fresh temporary name")
	require.Equal(t, data, f.files[tmp])
	require.EqualValues(t, len(data), w.size)

	// Progress restarts at 0 on each attempt and ends at the total.
	var starts int
	for _, c := range calls {
		require.EqualValues(t, len(data), c[1])
		if c[0] == 0 {
			starts++
		}
	}
	require.Equal(t, 3, starts)
	require.Equal(t, [2]int64{int64(len(data)), int64(len(data))}, calls[len(calls)-1])
}

func TestRetryGivesUpWithLastError(t *testing.T) {
	data, open := payload(4 << 20)
	f := &fakeRemote{fails: 5}
	start := time.Now()
	_, _, err := writeTempRetrying(context.Background(), "/c/d", "env.tar.gz", int64(len(data)), open,
		UploadOptions{Attempts: 3, Backoff: 20 * time.Millisecond}, f.write, f.remove)
	require.ErrorIs(t, err, syscall.EPIPE)
	require.EqualError(t, err, "attempt 3 of 3: broken pipe")
	require.Len(t, f.tmps, 3)
	require.Equal(t, f.tmps, f.removed)
	require.GreaterOrEqual(t, time.Since(start), 60*time.Millisecond, "backoff 20 ms, then 40 ms")
}

func TestRetryNotForPermanentErrors(t *testing.T) {
	data, open := payload(1 << 20)
	for _, perm := range []error{os.ErrPermission, errors.New("org.apache.hadoop.hdfs.protocol.DSQuotaExceededException: quota")} {
		var tries int
		write := func(context.Context, string, string, io.Reader) (written, error) { tries++; return written{}, perm }
		_, _, err := writeTempRetrying(context.Background(), "/c/d", "x", int64(len(data)), open,
			UploadOptions{Backoff: time.Millisecond}, write, func(string) {})
		require.ErrorIs(t, err, perm)
		require.Equal(t, 1, tries)
	}

	// A local read failure is ours, not the DataNode's.
	var tries int
	bad := func() (io.ReadCloser, error) { return io.NopCloser(errReader{}), nil }
	f := &fakeRemote{}
	write := func(ctx context.Context, dir, tmp string, src io.Reader) (written, error) {
		tries++
		return f.write(ctx, dir, tmp, src)
	}
	_, _, err := writeTempRetrying(context.Background(), "/c/d", "x", 10, bad, UploadOptions{Backoff: time.Millisecond}, write, f.remove)
	require.ErrorIs(t, err, syscall.EIO)
	require.Equal(t, 1, tries)
}

func TestRetryStopsWhenCancelled(t *testing.T) {
	data, open := payload(4 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeRemote{fails: 5}
	write := func(c context.Context, dir, tmp string, src io.Reader) (written, error) {
		cancel()
		return f.write(c, dir, tmp, src)
	}
	_, _, err := writeTempRetrying(ctx, "/c/d", "x", int64(len(data)), open, UploadOptions{Backoff: time.Hour}, write, f.remove)
	require.Error(t, err)
	require.Len(t, f.tmps, 1)
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, syscall.EIO }
