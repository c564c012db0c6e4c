package nodemanager

import (
	"context"
	"fmt"
)

// margin is what a follower asks for beyond the growth it expects.
const margin = 64 << 10

// Follower reads a running container's log file piece by piece: each Poll
// returns the bytes written since the previous one.
type Follower struct {
	c                   *Client
	nm, container, file string
	next                int64 // the file offset of the next byte to return
	want                int64 // how many bytes from the end to ask for next
}

// Follow starts following file at offset from (0: the beginning).
func (c *Client) Follow(nm, container, file string, from int64) *Follower {
	want := int64(maxPiece)
	if from > 0 {
		want = margin
	}
	return &Follower{c: c, nm: nm, container: container, file: file, next: from, want: want}
}

// Offset is the file offset the next Poll starts at.
func (f *Follower) Offset() int64 { return f.next }

// Poll returns what was written since the last Poll (nil if nothing). When
// more than maxPiece bytes were written in between, the bytes it cannot
// fetch any more are replaced by a line saying how many were skipped.
func (f *Follower) Poll(ctx context.Context) ([]byte, error) {
	for {
		p, err := f.c.Tail(ctx, f.nm, f.container, f.file, f.want)
		if err != nil {
			return nil, err
		}
		if p.Length < f.next {
			// Truncated or replaced: start over from its beginning.
			f.next = 0
		}
		if p.Offset <= f.next {
			data := p.Data[f.next-p.Offset:]
			f.next = p.Length
			f.want = clamp(2*int64(len(data)) + margin)
			return data, nil
		}
		if f.want >= maxPiece {
			skipped := p.Offset - f.next
			f.next = p.Length
			return append([]byte(fmt.Sprintf("[... %d bytes skipped ...]\n", skipped)), p.Data...), nil
		}
		f.want = clamp(p.Length - f.next + margin)
	}
}

func clamp(n int64) int64 {
	if n > maxPiece {
		return maxPiece
	}
	return n
}

// LastLines is the end of data holding its last n lines (a last line
// without newline counts as one).
func LastLines(data []byte, n int) []byte {
	if n <= 0 {
		return nil
	}
	end := len(data)
	if end > 0 && data[end-1] == '\n' {
		end--
	}
	for i := end - 1; i >= 0; i-- {
		if data[i] == '\n' {
			if n--; n == 0 {
				return data[i+1:]
			}
		}
	}
	return data
}
