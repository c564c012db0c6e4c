package hdfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"time"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/tfyarn/tfyarn/internal/pause"
)

// written is what writeFile put on HDFS.
type written struct {
	size   int64
	digest string // hex SHA-256 of the bytes sent
}

// writeFile creates p (which must not exist) with perm and streams r into it,
// hashing what it sends. On any failure the partial file is removed.
func (fs *FS) writeFile(ctx context.Context, p string, perm os.FileMode, r io.Reader) (written, error) {
	var w written
	err := fs.do(ctx, func() error {
		var err error
		w, err = fs.writeFileSync(ctx, p, perm, r)
		return err
	})
	return w, err
}

func (fs *FS) writeFileSync(ctx context.Context, p string, perm os.FileMode, r io.Reader) (written, error) {
	defaults, err := fs.client.ServerDefaults() // cached since Connect
	if err != nil {
		return written{}, err
	}
	f, err := fs.client.CreateFile(p, defaults.Replication, defaults.BlockSize, perm)
	if err != nil {
		return written{}, err
	}
	h := sha256.New()
	n, err := fs.copyTo(ctx, f, r, h)
	if err == nil {
		err = fs.closeFile(ctx, f)
	}
	if err != nil {
		// Deleting an open file also drops our lease on it. Best effort: the
		// error that matters is the one we return.
		_ = fs.client.Remove(p)
		return written{}, err
	}
	return written{size: n, digest: hex.EncodeToString(h.Sum(nil))}, nil
}

// copyTo streams r into f in chunks, giving each chunk a fresh DataNode
// deadline and checking ctx between chunks. Each chunk is hashed on another
// goroutine while it is written: sha256 is then off the path that feeds the
// DataNode (colinmarc's writer keeps only 5 packets in flight, so any pause
// between writes idles the pipeline).
func (fs *FS) copyTo(ctx context.Context, f *gohdfs.FileWriter, r io.Reader, h hash.Hash) (int64, error) {
	buf := make([]byte, copyChunk)
	var total int64
	hashed := make(chan struct{}, 1)
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			go func(b []byte) { h.Write(b); hashed <- struct{}{} }(buf[:n])
			err := f.SetDeadline(time.Now().Add(fs.ioTimeout))
			if err == nil {
				_, err = f.Write(buf[:n])
			}
			<-hashed // buf is read again next round
			if err != nil {
				return total, err
			}
			total += int64(n)
		}
		switch {
		case rerr == io.EOF, rerr == io.ErrUnexpectedEOF:
			return total, nil
		case rerr != nil:
			return total, rerr
		}
	}
}

// closeFile completes the file. The NameNode may answer "not yet" while the
// last block's replicas report in (ErrReplicating); like Hadoop's DFSOutputStream
// we retry with backoff (dfs.client.block.write.locateFollowingBlock.retries),
// completeRetries times, pausing completePause between calls.
func (fs *FS) closeFile(ctx context.Context, f *gohdfs.FileWriter) error {
	for attempt := 0; ; attempt++ {
		if err := f.SetDeadline(time.Now().Add(fs.ioTimeout)); err != nil {
			return err
		}
		err := f.Close()
		if err == nil || !gohdfs.IsErrReplicating(err) || attempt == completeRetries {
			return err
		}
		if err := pause.For(ctx, completePause(attempt)); err != nil {
			return err
		}
	}
}

// completeRetries is how many times closeFile calls complete() again.
const completeRetries = 9

// completePause is the pause after the complete() call number attempt
// (from 0) was answered "not yet": 25ms, doubling. Unlike Hadoop's 400ms
// first pause: the DataNode's report usually lands within milliseconds,
// and a small file (the job file, the AM's history) otherwise costs a
// whole job 400ms idle. Nine retries keep Hadoop's total patience (~12.8s
// vs 12.4s).
func completePause(attempt int) time.Duration {
	return 25 * time.Millisecond << attempt
}

// stat is Stat with ctx; a missing path is os.ErrNotExist (wrapped).
func (fs *FS) stat(ctx context.Context, p string) (os.FileInfo, error) {
	var fi os.FileInfo
	err := fs.do(ctx, func() error {
		var err error
		fi, err = fs.client.Stat(p)
		return err
	})
	return fi, err
}

func (fs *FS) mkdirAll(ctx context.Context, p string, perm os.FileMode) error {
	return fs.do(ctx, func() error { return fs.client.MkdirAll(p, perm) })
}

// removeAll removes p recursively; a missing p is fine.
func (fs *FS) removeAll(ctx context.Context, p string) error {
	err := fs.do(ctx, func() error { return fs.client.RemoveAll(p) })
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// bestEffortRemove cleans up after a failure without letting the caller's
// (possibly ended) ctx stop it.
func (fs *FS) bestEffortRemove(p string) {
	ctx, cancel := context.WithTimeout(context.Background(), fs.ioTimeout)
	defer cancel()
	_ = fs.removeAll(ctx, p)
}
