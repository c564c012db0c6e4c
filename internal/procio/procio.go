// Package procio reads this process's I/O counters (/proc/self/io), for
// tests that prove work was skipped: a cache hit must read next to nothing.
package procio

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Rchar is the bytes this process has read through read(2) and friends,
// from any file or socket alike (/proc/self/io's rchar). The test fails
// where the kernel does not say.
func Rchar(t testing.TB) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/io")
	if err != nil {
		t.Fatalf("procio: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("procio: rchar %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatalf("procio: no rchar in /proc/self/io (%v)", sc.Err())
	return 0
}
