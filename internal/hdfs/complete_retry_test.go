package hdfs

import (
	"testing"
	"time"
)

// Completing a file waits 25ms before its first retry, doubling, nine
// retries in all: a small file's "not yet replicated" answer costs
// milliseconds, not Hadoop's 400ms, and the whole wait still matches
// Hadoop's patience (~12.4s).
func TestCompleteRetrySchedule(t *testing.T) {
	if got := completePause(0); got != 25*time.Millisecond {
		t.Fatalf("first pause %s, want 25ms", got)
	}
	var total time.Duration
	for i := range completeRetries {
		if i > 0 && completePause(i) != 2*completePause(i-1) {
			t.Fatalf("pause %d is %s, want double %s", i, completePause(i), completePause(i-1))
		}
		total += completePause(i)
	}
	if completeRetries != 9 || total < 12*time.Second || total > 13*time.Second {
		t.Fatalf("%d retries waiting %s in all, want 9 within Hadoop's ~12.4s patience", completeRetries, total)
	}
}
