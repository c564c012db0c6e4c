package procio

import (
	"os"
	"path/filepath"
	"testing"
)

// Reading a file moves the counter by at least its size.
func TestRcharCountsReads(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	before := Rchar(t)
	if _, err := os.ReadFile(p); err != nil {
		t.Fatal(err)
	}
	if got := Rchar(t) - before; got < 1<<20 {
		t.Fatalf("read 1 MiB, rchar moved %d", got)
	}
}
