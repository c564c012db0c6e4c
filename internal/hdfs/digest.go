package hdfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
)

// FileDigest returns the hex SHA-256 and the length of the local file, read
// as a stream (environments are gigabytes; they must not be loaded whole).
func FileDigest(ctx context.Context, localPath string) (digest string, size int64, err error) {
	f, err := os.Open(localPath)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	return readerDigest(ctx, f)
}

func readerDigest(ctx context.Context, r io.Reader) (string, int64, error) {
	h := sha256.New()
	n, err := io.CopyBuffer(h, ctxReader{ctx, r}, make([]byte, copyChunk))
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// copyChunk is the unit of streaming; ctx is checked between chunks.
const copyChunk = 1 << 20

// ctxReader stops a long copy soon after ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
