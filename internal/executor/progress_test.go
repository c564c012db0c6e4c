package executor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
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

// TestProgressReporter: values reach the AM as they change; the one a
// program wrote just before exiting too (final); an AM that takes no
// progress (run --local) turns the reporter off with one line.
func TestProgressReporter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress")
	var mu sync.Mutex
	var got []contract.Progress
	var buf bytes.Buffer
	r := newProgressReporter(path, func(_ context.Context, p contract.Progress) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
		return nil
	}, &logger{w: &buf})
	ctx, cancel := context.WithCancel(context.Background())
	go r.run(ctx, 10*time.Millisecond)
	require.NoError(t, os.WriteFile(path, []byte("1/4\n"), 0o600))
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 1 }, 5*time.Second, 5*time.Millisecond)
	cancel()
	require.NoError(t, os.WriteFile(path, []byte("4/4\n"), 0o600)) // written as the program exits
	r.final(context.Background())
	require.Equal(t, []contract.Progress{{Fraction: 0.25, Step: 1, Total: 4}, {Fraction: 1, Step: 4, Total: 4}}, got)

	calls := 0
	off := newProgressReporter(path, func(context.Context, contract.Progress) error { calls++; return rendezvous.ErrNotServed }, &logger{w: &buf})
	off.run(context.Background(), time.Millisecond) // returns by itself
	off.final(context.Background())
	require.Equal(t, 1, calls)
	require.Equal(t, 1, strings.Count(buf.String(), "progress is not reported"), buf.String())
}

// TestClaimsProgressInterval: README "reads the file every second".
func TestClaimsProgressInterval(t *testing.T) {
	require.Equal(t, time.Second, progressInterval)
	data, err := os.ReadFile(filepath.Join(clustertest.RepoRoot(), "docs", "logs-and-ui.md"))
	require.NoError(t, err)
	require.Contains(t, strings.Join(strings.Fields(string(data)), " "), "The task's launcher reads the file every second")
}

// BenchmarkProgressRead: one of the launcher's reads of the progress file
// (open, fstat, read, parse, compare), once a second per task.
func BenchmarkProgressRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "progress")
	if err := os.WriteFile(path, []byte("120/1000\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	var w progressWatcher
	for range b.N {
		if p, _ := w.observe(readProgressFile(path)); p != nil {
			w.sent = p
		}
	}
}
