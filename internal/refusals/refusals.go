// Package refusals logs what a server refused without letting strangers
// fill its log. Anyone who can reach a port can make it refuse requests
// as fast as the network allows; a line per refusal, quoting what the
// stranger sent, would fill the NodeManager's log disk (and, through log
// aggregation, the job owner's HDFS quota). So a Log writes the first few
// refusals one by one, every field clipped to a small bound and quoted,
// then only counts them: one summary line per interval, by reason, with
// the last peer. A whole interval without a refusal re-arms the first few.
//
// Callers pass only what is safe to log: the peer, the method, the path
// and the reason, never a header, a key or a signature.
package refusals

import (
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Bounds on what is logged.
const (
	// MaxField is how many bytes of the peer, method and path are logged.
	MaxField = 96
	// MaxReason is how many bytes of the reason are logged.
	MaxReason = 2 * MaxField
	// First is how many refusals are logged one by one before counting.
	First = 5
	// DefaultInterval is how often counted refusals are summed up.
	DefaultInterval = time.Minute
	// maxReasons bounds the reasons counted apart; others count as "other".
	maxReasons = 8
)

// Refusal is what is logged of one refused request or connection.
type Refusal struct {
	Peer   string // the remote address
	Method string // optional
	Path   string // optional
	Reason string // why; its words before any number or detail group the counts
}

// Log counts and logs refusals. The zero value is not usable: see New.
type Log struct {
	what     string
	logf     func(string, ...any)
	now      func() time.Time
	interval time.Duration

	mu      sync.Mutex
	logged  int              // logged one by one since re-armed
	start   time.Time        // of the interval being counted
	last    time.Time        // of the last refusal
	counts  map[string]int64 // by reason, this interval
	total   int64
	peer    string // of the last counted refusal
	timer   *time.Timer
	stopped bool
}

// Option adjusts a Log.
type Option func(*Log)

// WithClock replaces time.Now (tests). With it, summaries are written
// only by Refuse and Flush, never by a timer.
func WithClock(now func() time.Time) Option { return func(l *Log) { l.now = now } }

// WithInterval sets how often counted refusals are summed up.
func WithInterval(d time.Duration) Option { return func(l *Log) { l.interval = d } }

// New returns a Log writing to logf; what names the listener in every
// line ("rendezvous", "control port 10.0.0.5:41234").
func New(what string, logf func(string, ...any), opts ...Option) *Log {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	l := &Log{what: what, logf: logf, interval: DefaultInterval}
	for _, o := range opts {
		o(l)
	}
	if l.now == nil {
		l.now = time.Now
		l.timer = time.AfterFunc(time.Hour, l.tick)
		l.timer.Stop()
	}
	return l
}

// Refuse records one refusal: logged in full (clipped) while few, else
// counted. It never blocks on anything but the log's own lock and logf.
func (l *Log) Refuse(r Refusal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if l.total > 0 && now.Sub(l.start) >= l.interval {
		l.summaryLocked(now)
	}
	if l.total == 0 && l.logged >= First && now.Sub(l.last) >= l.interval {
		l.logged = 0 // a quiet interval: the next few are worth reading again
	}
	l.last = now
	if l.logged < First {
		l.logged++
		l.logf("%s: refused %s", l.what, format(r))
		return
	}
	if l.total == 0 {
		l.start = now
		l.counts = map[string]int64{}
		if l.timer != nil && !l.stopped {
			l.timer.Reset(l.interval)
		}
	}
	l.total++
	k := Kind(r.Reason)
	if _, ok := l.counts[k]; !ok && len(l.counts) >= maxReasons {
		k = "other"
	}
	l.counts[k]++
	l.peer = Clip(r.Peer)
}

// Flush writes the summary of what was counted, if anything.
func (l *Log) Flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total > 0 {
		l.summaryLocked(l.now())
	}
}

// Close writes what is counted and stops the timer.
func (l *Log) Close() {
	l.mu.Lock()
	l.stopped = true
	if l.timer != nil {
		l.timer.Stop()
	}
	l.mu.Unlock()
	l.Flush()
}

func (l *Log) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total > 0 && !l.stopped {
		l.summaryLocked(l.now())
	}
}

func (l *Log) summaryLocked(now time.Time) {
	kinds := make([]string, 0, len(l.counts))
	for k := range l.counts {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if l.counts[kinds[i]] != l.counts[kinds[j]] {
			return l.counts[kinds[i]] > l.counts[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = Count(l.counts[k]) + " " + k
	}
	secs := max(int64(now.Sub(l.start).Round(time.Second)/time.Second), 1)
	noun := "requests"
	if l.total == 1 {
		noun = "request"
	}
	l.logf("%s: refused %s %s in the last %d s: %s; last from %s", l.what, Count(l.total), noun, secs, strings.Join(parts, ", "), l.peer)
	l.total, l.counts = 0, nil
}

// format is one refusal's line: each field clipped and quoted when it
// holds anything a log reader could mistake for structure.
func format(r Refusal) string {
	var b strings.Builder
	if r.Method != "" || r.Path != "" {
		b.WriteString(Clip(r.Method) + " " + Clip(r.Path) + " ")
	}
	b.WriteString("from " + Clip(r.Peer) + ": " + clip(r.Reason, MaxReason))
	return b.String()
}

// Clip bounds s to MaxField bytes (saying how many were left out) and
// quotes it if it holds control characters or invalid UTF-8.
func Clip(s string) string { return clip(s, MaxField) }

func clip(s string, limit int) string {
	cut := ""
	if len(s) > limit {
		n := limit
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		cut = "…(" + strconv.Itoa(len(s)) + " bytes)"
		s = s[:n]
	}
	if needsQuote(s) {
		s = strconv.QuoteToASCII(s)
	}
	return s + cut
}

func needsQuote(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return true
		}
	}
	return false
}

// Kind is the words of a reason before any number, parenthesis, colon
// or comma: "timestamp off by 7m0s, ..." counts as "timestamp off by".
func Kind(reason string) string {
	if i := strings.IndexAny(reason, "0123456789(:,;\"'\n"); i >= 0 {
		reason = reason[:i]
	}
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return "other"
	}
	if len(reason) > 48 {
		return Clip(reason[:48])
	}
	return Clip(reason)
}

// Count writes n with thousands separators: 12,345.
func Count(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
