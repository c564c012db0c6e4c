package core

import "testing"

func TestNearMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		rss, limit int64
		want       bool
	}{
		{0, 0, false},
		{1 << 40, 0, false},           // limit unknown
		{230 * mib, 256 * mib, false}, // 89.8%
		{231 * mib, 256 * mib, true},  // 90.2%
		{256 * mib, 256 * mib, true},
		{300 * mib, 256 * mib, true}, // beyond: the kill is near
		{921 * mib, 1024 * mib, false},
		{922 * mib, 1024 * mib, true},
	} {
		if got := NearMemoryLimit(c.rss, c.limit); got != c.want {
			t.Errorf("NearMemoryLimit(%d MiB, %d MiB) = %v, want %v", c.rss/mib, c.limit/mib, got, c.want)
		}
	}
}
