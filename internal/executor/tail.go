package executor

import (
	"bytes"
	"sync"
)

// tailBuffer is an io.Writer that keeps the last n lines written to it, for
// the exit report: the error that killed a program is almost always in its
// last lines of stderr.
type tailBuffer struct {
	mu      sync.Mutex
	lines   []string // ring of complete lines
	next    int      // where the next complete line goes
	full    bool
	partial []byte // the unfinished last line
	maxLine int
	// onLine, if set, sees each complete line (capped at maxLine), under
	// the buffer's lock: it must not block.
	onLine func(string)
}

func newTailBuffer(n, maxLine int) *tailBuffer {
	return &tailBuffer{lines: make([]string, n), maxLine: maxLine}
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.partial = t.appendCapped(t.partial, p)
			break
		}
		t.push(string(t.appendCapped(t.partial, p[:i])))
		t.partial = t.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// appendCapped keeps a line's first maxLine bytes: a program writing one
// endless line (a progress bar without newlines) must not grow the buffer.
func (t *tailBuffer) appendCapped(dst, p []byte) []byte {
	if room := t.maxLine - len(dst); room < len(p) {
		if room <= 0 {
			return dst
		}
		p = p[:room]
	}
	return append(dst, p...)
}

func (t *tailBuffer) push(line string) {
	if t.onLine != nil {
		t.onLine(line)
	}
	if len(t.lines) == 0 {
		return
	}
	t.lines[t.next] = line
	t.next = (t.next + 1) % len(t.lines)
	if t.next == 0 {
		t.full = true
	}
}

// Lines returns the kept lines, oldest first, with an unfinished last line.
func (t *tailBuffer) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	if t.full {
		out = append(out, t.lines[t.next:]...)
	}
	out = append(out, t.lines[:t.next]...)
	if len(t.partial) > 0 {
		out = append(out, string(t.partial))
	}
	if t.full && len(t.partial) > 0 {
		out = out[1:]
	}
	return out
}
