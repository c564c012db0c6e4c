package clustertest

import (
	"sync"
	"testing"
)

// Subtest is one subtest of Subtests: its name and its body.
type Subtest struct {
	Name string
	Run  func(t *testing.T)
}

// Subtests runs the subtests at most width at once (all at once when width is 0), starting them
// in the order given, and returns once every one has ended. It is for subtests that spend their
// time waiting for a cluster (a token's lifetime, an allocation deadline, a long job) rather than
// computing. As t.Parallel subtests they would run -parallel at a time (GOMAXPROCS by default:
// two on a 2-core machine) in an order of the scheduler's, so that the longest wait could start
// last and wait out the others' first. Here the caller lists the longest first and says how many
// may share the cluster. Each runs in a goroutine of its own: t.Run may be called from several.
func Subtests(t *testing.T, width int, subtests ...Subtest) {
	t.Helper()
	if width <= 0 || width > len(subtests) {
		width = len(subtests)
	}
	slots := make(chan struct{}, width)
	var wg sync.WaitGroup
	for _, s := range subtests {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			t.Run(s.Name, s.Run)
		}()
	}
	wg.Wait()
}
