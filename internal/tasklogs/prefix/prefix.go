// Package prefix puts a task's name before every line it writes
// ("[worker:1] "), keeping lines whole when tasks write at once: run --local
// prints its processes' output with it, tfyarn logs --follow and run's live
// output the NodeManagers'. It imports nothing of tfyarn, so that --local
// stays free of YARN.
package prefix

import (
	"bytes"
	"io"
	"sync"
)

// Sink is one destination (the terminal's stdout or stderr) shared by every
// task's prefixed writer; its lock keeps each line whole when tasks write
// at once.
type Sink struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *Sink) writeLine(prefix, line []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := make([]byte, 0, len(prefix)+len(line)+1)
	buf = append(append(buf, prefix...), line...)
	if len(line) == 0 || line[len(line)-1] != '\n' {
		buf = append(buf, '\n')
	}
	_, _ = s.w.Write(buf) // output is best effort: a closed terminal must not fail the job
}

// Writer puts "[worker:1] " before every line a task writes, holding
// a partial line until its newline (or Flush) so tasks' lines never mix.
type Writer struct {
	sink   *Sink
	prefix []byte

	mu      sync.Mutex
	pending []byte
}

// maxPending bounds a line without newline (a progress bar redrawn with
// \r): past it, the text goes out as a line of its own.
const maxPending = 64 << 10

// NewWriter returns a writer prefixing each line it writes to s with prefix.
func NewWriter(s *Sink, prefix string) *Writer {
	return &Writer{sink: s, prefix: []byte(prefix)}
}

func (p *Writer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.pending = append(p.pending, b...)
			if len(p.pending) >= maxPending {
				p.sink.writeLine(p.prefix, p.pending)
				p.pending = p.pending[:0]
			}
			break
		}
		line := b[:i+1]
		if len(p.pending) > 0 {
			line = append(p.pending, line...)
			p.pending = p.pending[:0]
		}
		p.sink.writeLine(p.prefix, line)
		b = b[i+1:]
	}
	return n, nil
}

// Flush writes out a last line that has no newline.
func (p *Writer) Flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pending) > 0 {
		p.sink.writeLine(p.prefix, p.pending)
		p.pending = p.pending[:0]
	}
}

// NewSink returns a destination for Writers writing to w.
func NewSink(w io.Writer) *Sink { return &Sink{w: w} }
