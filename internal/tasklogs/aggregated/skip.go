package aggregated

import (
	"io"
)

// Skipping what is not shown: `tfyarn logs --tail N` of a large log needs
// only its end. Where the aggregated file stores a log uncompressed (a
// TFile with compression none, Hadoop's default, or an IFile region), the
// bytes skipped are not read at all: a TFile value's chunk headers are
// read, its chunks' bytes are stepped over; an IFile region is seeked.
// Compressed logs are read through.

// Remaining is how many bytes a File's Content still holds.
func Remaining(r io.Reader) (int64, bool) {
	switch c := r.(type) {
	case *exactReader:
		return c.n, true
	case *io.LimitedReader:
		return c.N, true
	}
	return 0, false
}

// Skip advances a File's Content by n bytes (fewer at its end), without
// reading them where the format allows.
func Skip(r io.Reader, n int64) error {
	switch c := r.(type) {
	case *exactReader:
		n = min(n, c.n)
		if s, ok := c.r.(*chunkReader); ok {
			k, err := s.skip(n)
			c.n -= k
			return err
		}
		k, err := io.CopyN(io.Discard, c.r, n)
		c.n -= k
		return err
	case *io.LimitedReader:
		n = min(n, c.N)
		if s, ok := c.R.(io.Seeker); ok {
			if _, err := s.Seek(n, io.SeekCurrent); err != nil {
				return err
			}
			c.N -= n
			return nil
		}
	}
	_, err := io.CopyN(io.Discard, r, n)
	if err == io.EOF {
		err = nil
	}
	return err
}

// skip steps over n bytes of the value: chunk headers are read, chunk
// bytes discarded (by the block reader: without reading them when the
// block is uncompressed).
func (c *chunkReader) skip(n int64) (int64, error) {
	var done int64
	for done < n {
		if c.remain == 0 {
			if c.begun && c.last {
				return done, nil
			}
			v, err := readVInt(c.r, -(1 << 31), 1<<31-1, "value chunk length")
			if err != nil {
				return done, err
			}
			c.begun, c.last = true, v >= 0
			if v < 0 {
				v = -v
			}
			c.remain = v
			continue
		}
		k := min(n-done, c.remain)
		d, err := c.r.Discard(int(k))
		done += int64(d)
		c.remain -= int64(d)
		if err != nil {
			return done, noEOF(err)
		}
	}
	return done, nil
}

// blockReader is what Scan reads a block through: bufio.Reader for a
// compressed one, posReader for an uncompressed one.
type blockReader interface {
	io.Reader
	io.ByteReader
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
}

// posReader is a buffered reader over a region of an io.ReaderAt whose
// Discard steps over bytes beyond its buffer without reading them.
type posReader struct {
	ra       io.ReaderAt
	off, end int64 // the next unbuffered byte of ra; the region's end
	buf      []byte
	r, w     int // buffered: buf[r:w]
}

func newPosReader(ra io.ReaderAt, off, n int64, size int) *posReader {
	return &posReader{ra: ra, off: off, end: off + n, buf: make([]byte, size)}
}

func (p *posReader) fill() error {
	if p.r < p.w {
		return nil
	}
	if p.off >= p.end {
		return io.EOF
	}
	n := min(int64(len(p.buf)), p.end-p.off)
	k, err := p.ra.ReadAt(p.buf[:n], p.off)
	p.off += int64(k)
	p.r, p.w = 0, k
	if k > 0 {
		return nil
	}
	if err == nil || err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (p *posReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if err := p.fill(); err != nil {
		return 0, err
	}
	n := copy(b, p.buf[p.r:p.w])
	p.r += n
	return n, nil
}

func (p *posReader) ReadByte() (byte, error) {
	if err := p.fill(); err != nil {
		return 0, err
	}
	c := p.buf[p.r]
	p.r++
	return c, nil
}

// Peek serves the 1-byte look-ahead Scan needs (more only as buffered).
func (p *posReader) Peek(n int) ([]byte, error) {
	if err := p.fill(); err != nil {
		return nil, err
	}
	if p.w-p.r < n {
		return p.buf[p.r:p.w], io.ErrShortBuffer
	}
	return p.buf[p.r : p.r+n], nil
}

func (p *posReader) Discard(n int) (int, error) {
	if n <= p.w-p.r {
		p.r += n
		return n, nil
	}
	done := p.w - p.r
	p.r = p.w
	rest := int64(n - done)
	if p.off+rest > p.end {
		skipped := p.end - p.off
		p.off = p.end
		return done + int(skipped), io.EOF
	}
	p.off += rest
	return n, nil
}
