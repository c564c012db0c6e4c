package appmaster

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// PeakRSSKiB reads the process's peak resident set size (VmHWM) from
// /proc/self/status; 0 when unavailable (not Linux).
func PeakRSSKiB() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
