package refusals

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func collect() (*[]string, func(string, ...any)) {
	var lines []string
	return &lines, func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }
}

// TestFloodGivesBoundedLog: 100,000 refusals of 8 KiB paths within one
// interval give First clipped lines and one summary, whatever they carry.
func TestFloodGivesBoundedLog(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	lines, logf := collect()
	l := New("rendezvous", logf, WithClock(c.now))
	path := "/rendezvous/v1/" + strings.Repeat("A", 8<<10)
	for i := 0; i < 100_000; i++ {
		reason := "bad signature (wrong key, or the request was altered)"
		if i%10 == 0 {
			reason = "unsigned request (missing X-Tfyarn-Signer)"
		}
		l.Refuse(Refusal{Peer: "127.0.0.5:4242", Method: "GET", Path: path, Reason: reason})
	}
	c.t = c.t.Add(DefaultInterval)
	l.Flush()
	require.Len(t, *lines, First+1)
	total := 0
	for _, line := range *lines {
		total += len(line)
		require.Less(t, len(line), 400, "one line: %q", line)
		require.NotContains(t, line, strings.Repeat("A", MaxField+1))
	}
	require.Contains(t, (*lines)[0], "…(8207 bytes)")
	require.Equal(t, "rendezvous: refused 99,995 requests in the last 60 s: 89,996 bad signature, 9,999 unsigned request; last from 127.0.0.5:4242", (*lines)[First])
	require.Less(t, total, 2<<10)
}

// TestOneSummaryPerInterval: a steady flood gives one line per interval,
// written by the next refusal past it (or by Flush).
func TestOneSummaryPerInterval(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	lines, logf := collect()
	l := New("control port", logf, WithClock(c.now), WithInterval(10*time.Second))
	for i := 0; i < 10*60; i++ { // 10 a second for a minute
		l.Refuse(Refusal{Peer: "p", Reason: fmt.Sprintf("timestamp off by %ds", i)})
		c.t = c.t.Add(100 * time.Millisecond)
	}
	l.Close()
	require.Len(t, *lines, First+6)
	require.Contains(t, (*lines)[First], "refused 100 requests in the last 10 s: 100 timestamp off by; last from p")
	l.Refuse(Refusal{Peer: "p", Reason: "x"}) // after Close: still counted, never a timer
}

// TestQuietIntervalRearms: after an interval without refusals the next
// few are logged one by one again.
func TestQuietIntervalRearms(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	lines, logf := collect()
	l := New("store", logf, WithClock(c.now))
	for i := 0; i < First+1; i++ {
		l.Refuse(Refusal{Peer: "p", Reason: "r"})
	}
	c.t = c.t.Add(2 * DefaultInterval)
	l.Refuse(Refusal{Peer: "q", Reason: "r"}) // writes the summary of the one counted
	c.t = c.t.Add(2 * DefaultInterval)
	l.Refuse(Refusal{Peer: "q", Reason: "now seen"})
	require.Equal(t, []string{"store: refused from p: r", "store: refused from p: r", "store: refused from p: r", "store: refused from p: r", "store: refused from p: r",
		"store: refused 1 request in the last 120 s: 1 r; last from p",
		"store: refused 2 requests in the last 120 s: 1 now seen, 1 r; last from q"}[:6], (*lines)[:6])
}

// TestReasonsAreBounded: strangers choosing reasons cannot grow the counts.
func TestReasonsAreBounded(t *testing.T) {
	c := &clock{t: time.Unix(1e9, 0)}
	lines, logf := collect()
	l := New("x", logf, WithClock(c.now))
	for i := 0; i < 10_000; i++ {
		l.Refuse(Refusal{Peer: "p", Reason: fmt.Sprintf("reason %c%c", 'a'+i%26, 'a'+i/26%26)})
	}
	l.Flush()
	last := (*lines)[len(*lines)-1]
	require.Less(t, len(last), 400, last)
	require.Contains(t, last, "9,875 other, ")
}

func TestClip(t *testing.T) {
	require.Equal(t, "plain /path", Clip("plain /path"))
	require.Equal(t, `"a\nb"`, Clip("a\nb"))
	require.Equal(t, `"\xff"`, Clip("\xff"))
	long := strings.Repeat("é", 100) // 200 bytes
	got := Clip(long)
	require.True(t, strings.HasSuffix(got, "…(200 bytes)"), got)
	require.LessOrEqual(t, len(strings.TrimSuffix(got, "…(200 bytes)")), MaxField)
	require.Equal(t, "1,234,567", Count(1234567))
	require.Equal(t, "999", Count(999))
}

// TestTimerWritesTheSummary: with the real clock, counted refusals are
// summed up once the interval passes even if no other refusal comes.
func TestTimerWritesTheSummary(t *testing.T) {
	done := make(chan string, 10)
	l := New("t", func(f string, a ...any) { done <- fmt.Sprintf(f, a...) }, WithInterval(50*time.Millisecond))
	defer l.Close()
	for i := 0; i < First+3; i++ {
		l.Refuse(Refusal{Peer: "p", Reason: "r"})
	}
	for i := 0; i < First; i++ {
		<-done
	}
	select {
	case line := <-done:
		require.Contains(t, line, "refused 3 requests")
	case <-time.After(5 * time.Second):
		t.Fatal("no summary within 5 s of a 50 ms interval")
	}
}
