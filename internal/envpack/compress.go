package envpack

import (
	"compress/gzip"
	"io"
	"runtime"
	"time"

	"github.com/klauspost/pgzip"
)

// DefaultLevel is the gzip level Pack uses when Options.Level is 0. Level 1
// is several times faster than 6 and costs only a few percent of size on
// wheels that are mostly compressed already; see bench/results/pack.md.
const DefaultLevel = 1

// pgzipBlock is pgzip's block size. The output depends on it (blocks are
// compressed independently, each primed with the previous block's last
// 32 KiB), never on how many blocks run at once: so it is a constant.
const pgzipBlock = 1 << 20

func newGzip(w io.Writer, opts Options) (io.WriteCloser, error) {
	level := opts.Level
	if level == 0 {
		level = DefaultLevel
	}
	if opts.Serial {
		return gzip.NewWriterLevel(w, level) // zero Header: no name, no mtime
	}
	z, err := pgzip.NewWriterLevel(w, level)
	if err != nil {
		return nil, err
	}
	// pgzip writes uint32(ModTime.Unix()) even for the zero Time (which is
	// not 0): the epoch gives the "no time" 0 that compress/gzip writes.
	z.ModTime = time.Unix(0, 0)
	// Blocks in flight: enough to keep every CPU busy while one is written out.
	if err := z.SetConcurrency(pgzipBlock, 2*runtime.GOMAXPROCS(0)); err != nil {
		return nil, err
	}
	return z, nil
}
