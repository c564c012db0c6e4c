package progressbar

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// redrawEvery throttles redraws: callers report every MiB, far faster than
// anyone reads.
const redrawEvery = 100 * time.Millisecond

// tailBudget is room kept for " 100%  999.9 MiB / 999.9 MiB  999.9 MiB/s".
const tailBudget = 44

// Bar is one progress line. The zero value and a nil *Bar are valid and draw nothing.
type Bar struct {
	mu      sync.Mutex
	w       io.Writer
	label   string
	width   int
	start   time.Time
	last    time.Time
	drawn   bool
	now     func() time.Time
	lastLen int
}

// New returns a bar drawing on w if w is a terminal, else one that draws
// nothing (Update and Done are then no-ops).
func New(w io.Writer, label string) *Bar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return &Bar{}
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width <= 0 {
		width = 80
	}
	return newBar(w, label, width, time.Now)
}

func newBar(w io.Writer, label string, width int, now func() time.Time) *Bar {
	return &Bar{w: w, label: label, width: width, now: now, start: now()}
}

// Update records progress (its signature fits hdfs.ProgressFunc). A sent of
// 0 after progress restarts the bar's clock: a retried upload starts over.
func (b *Bar) Update(sent, total int64) {
	if b == nil || b.w == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if sent == 0 {
		b.start = now
	}
	if b.drawn && sent < total && now.Sub(b.last) < redrawEvery {
		return
	}
	b.last = now
	b.draw(sent, total, now)
}

// Done ends the line, if anything was drawn.
func (b *Bar) Done() {
	if b == nil || b.w == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprintln(b.w)
		b.drawn = false
	}
}

func (b *Bar) draw(sent, total int64, now time.Time) {
	frac := 1.0
	if total > 0 {
		frac = float64(sent) / float64(total)
	}
	frac = min(max(frac, 0), 1)
	rate := ""
	if el := now.Sub(b.start).Seconds(); el > 0.2 && sent > 0 {
		rate = "  " + Bytes(int64(float64(sent)/el)) + "/s"
	}
	tail := fmt.Sprintf(" %3.0f%%  %s / %s%s", 100*frac, Bytes(sent), Bytes(total), rate)
	// A fixed budget for the tail (not its current length) keeps the bar
	// from changing size as the numbers do.
	barLen := b.width - len(b.label) - tailBudget - 3
	line := b.label + tail
	if barLen >= 10 {
		barLen = min(barLen, 40)
		fill := int(frac * float64(barLen))
		line = b.label + " [" + strings.Repeat("=", fill) + strings.Repeat(" ", barLen-fill) + "]" + tail
	}
	// Pad over a longer previous line (the rate can shrink).
	pad := ""
	if n := b.lastLen - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	b.lastLen = len(line)
	fmt.Fprint(b.w, "\r"+line+pad)
	b.drawn = true
}

// Bytes formats n in binary units with one decimal: 0 B, 512 B, 1.5 KiB, 331.9 MiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
