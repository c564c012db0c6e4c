package executor

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tfyarn/tfyarn/contract"
)

func TestProgressWatcher(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "progress")
	var w progressWatcher
	step := func(content *string) (*contract.Progress, string) {
		t.Helper()
		if content != nil {
			if err := os.WriteFile(path, []byte(*content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return w.observe(readProgressFile(path))
	}
	s := func(v string) *string { return &v }

	// No file yet, an empty one (truncated, not yet written): nothing, quietly.
	if p, line := step(nil); p != nil || line != "" {
		t.Fatalf("missing file: %v %q", p, line)
	}
	if p, line := step(s("")); p != nil || line != "" {
		t.Fatalf("empty file: %v %q", p, line)
	}
	// A value is sent; the same value again is not.
	p, _ := step(s("120/1000\n"))
	if p == nil || *p != (contract.Progress{Fraction: 0.12, Step: 120, Total: 1000}) {
		t.Fatalf("120/1000: %v", p)
	}
	w.sent = p
	if p, _ := step(nil); p != nil {
		t.Fatalf("unchanged value sent again: %v", p)
	}
	// A read in the middle of a rewrite ("120/10" of "120/1000") is ignored
	// without a word; the completed write is taken.
	if p, line := step(s("120/10")); p != nil || line != "" {
		t.Fatalf("partial write: %v %q", p, line)
	}
	if p, _ := step(s("130/1000")); p == nil || p.Step != 130 {
		t.Fatalf("after a partial write: %v", p)
	}
	// Garbage seen twice in a row is logged once, until a good read.
	var lines []string
	for range 4 {
		p, line := step(s("loss=0.3"))
		if p != nil {
			t.Fatalf("garbage sent: %v", p)
		}
		if line != "" {
			lines = append(lines, line)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "loss=0.3") {
		t.Fatalf("garbage logged %q, want one line naming it", lines)
	}
	if p, _ := step(s("0.5")); p == nil || p.Fraction != 0.5 {
		t.Fatalf("fraction after garbage: %v", p)
	}
	// A huge file is read only up to the bound, and refused.
	huge := strings.Repeat("9", 10<<20)
	for range 2 {
		if p, _ := step(&huge); p != nil {
			t.Fatalf("huge file sent: %v", p)
		}
	}
	if b, err := readProgressFile(path); err != nil || len(b) != contract.MaxProgressFileSize+1 {
		t.Fatalf("read %d bytes of a huge file (%v), want %d", len(b), err, contract.MaxProgressFileSize+1)
	}
	// A FIFO in its place does not block the launcher.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readProgressFile(fifo); err == nil {
		t.Fatal("read a FIFO as a progress file")
	}
}
