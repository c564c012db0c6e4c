package hdfs

import "io"

// ProgressFunc is told how far an upload is: sent bytes of total. It is
// called from the uploading goroutine after each chunk (1 MiB) is read for
// sending, so it must be quick; a retried upload starts again from sent 0.
type ProgressFunc func(sent, total int64)

// progressReader reports what has been read from the local source, which
// copyTo hands to the DataNode pipeline chunk by chunk right away.
type progressReader struct {
	r     io.Reader
	sent  int64
	total int64
	fn    ProgressFunc
}

func withProgress(r io.Reader, total int64, fn ProgressFunc) io.Reader {
	if fn == nil {
		return r
	}
	fn(0, total)
	return &progressReader{r: r, total: total, fn: fn}
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.sent += int64(n)
		p.fn(p.sent, p.total)
	}
	return n, err
}
