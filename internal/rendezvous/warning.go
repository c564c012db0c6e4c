package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Warnings: the AM warns a task's launcher, which long-polls for them
// while its program runs, one after another:
//
//	GET PathPrefix+"warning?task=worker:1&container=…&after=N&wait=…" → 200 {"seq":M,"kind":…,"deadline_unix_ms":…,"reason":…} | 204 none newer
//
// Kinds are contract.WarningKind's: a preemption (the ResourceManager
// told the AM, some seconds ahead, which containers its scheduler is about
// to preempt; the deadline is the earliest kill) or idle GPUs (the
// deadline is when the job fails unless they work, 0 for none). Each
// notice has a sequence number; the launcher asks for the first after the
// last it took. A notice is for one container: a launcher in another (an
// earlier or a later attempt of the task) never sees it. An AM whose
// Handler is no NoticeHandler answers 404 (ErrNotServed), as an AM from
// before it.

// Notice is a warning the AM gives a task's launcher.
type Notice struct {
	// Seq orders a task's notices, from 1; the Board sets it.
	Seq uint64
	// Kind is what the notice warns of.
	Kind contract.WarningKind
	// Deadline is, for a preemption, the earliest time YARN may kill the
	// container: the scheduler's wait before killing, counted from the
	// last moment it can have decided (see appmaster/core.PreemptionWarned).
	// For idle GPUs it is when the job fails unless they work; zero when it
	// does not (--gpu-idle-action warn).
	Deadline time.Time
	// Reason says what happens and why, in words.
	Reason string
}

// NoticeHandler is what a Handler implements to pass warnings on (the
// "warning" endpoint).
type NoticeHandler interface {
	// WaitNotice returns the first notice after the one numbered after for
	// task's container containerID once there is one, or ctx's error when
	// ctx ends first.
	WaitNotice(ctx context.Context, task taskspec.TaskID, containerID string, after uint64) (Notice, error)
}

type wireNotice struct {
	Seq            uint64 `json:"seq"`
	Kind           string `json:"kind"`
	DeadlineUnixMS int64  `json:"deadline_unix_ms"`
	Reason         string `json:"reason"`
}

// Deadlines on the wire lie between 2000 and 2200: anything else is junk.
var (
	minDeadlineMS = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	maxDeadlineMS = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
)

func encodeNotice(n Notice) []byte {
	w := wireNotice{Seq: n.Seq, Kind: string(n.Kind), Reason: clip(n.Reason)}
	if !n.Deadline.IsZero() {
		w.DeadlineUnixMS = n.Deadline.UnixMilli()
	}
	return mustJSON(w)
}

// DecodeNotice parses and checks the AM's answer: a sequence number of at
// least 1, a known kind, a deadline in milliseconds since the epoch
// (between the years 2000 and 2200; 0, none, for idle GPUs only) and a
// reason of printable text, at most 1024 bytes.
func DecodeNotice(body []byte) (Notice, error) {
	var w wireNotice
	if err := decodeJSON(body, &w); err != nil {
		return Notice{}, fmt.Errorf("warning: %w", err)
	}
	kind := contract.WarningKind(w.Kind)
	if w.Seq == 0 || !kind.Known() {
		return Notice{}, fmt.Errorf("warning: sequence number %d or kind %.40q is not one this launcher knows", w.Seq, w.Kind)
	}
	n := Notice{Seq: w.Seq, Kind: kind, Reason: w.Reason}
	switch {
	case w.DeadlineUnixMS == 0 && kind == contract.WarningGPUIdle:
	case w.DeadlineUnixMS < minDeadlineMS || w.DeadlineUnixMS > maxDeadlineMS:
		return Notice{}, fmt.Errorf("warning: deadline %d ms is not a time between 2000 and 2200", w.DeadlineUnixMS)
	default:
		n.Deadline = time.UnixMilli(w.DeadlineUnixMS)
	}
	if len(w.Reason) > maxReasonLen || strings.ContainsFunc(w.Reason, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return Notice{}, errors.New("warning: the reason is too long or not printable text")
	}
	return n, nil
}

// WaitNotice long-polls until the AM warns containerID, the launcher's
// own container, with a notice after the one numbered after (0: any), or
// ctx ends. An AM that passes on no warnings gives an error matching
// ErrNotServed: stop asking it.
func (c *Client) WaitNotice(ctx context.Context, task taskspec.TaskID, containerID string, after uint64) (Notice, error) {
	q := url.Values{"task": {task.String()}, "container": {containerID}, "after": {strconv.FormatUint(after, 10)}}
	n, err := longPollFor(ctx, c, "warning", q, "a warning as "+task.String(), DecodeNotice)
	if err == nil && n.Seq <= after {
		return Notice{}, fmt.Errorf("rendezvous: the AM answered warning %d when asked for one after %d", n.Seq, after)
	}
	return n, err
}

func (s *Server) servesNotices() bool {
	_, ok := s.h.(NoticeHandler)
	return ok
}

func (s *Server) warning(r *http.Request, resp responder, container string) {
	task, ctx, cancel, ok := s.longPoll(r, resp)
	if !ok {
		return
	}
	defer cancel()
	if !s.bound(resp, "warning", task, r.URL.Query().Get("container"), container) {
		return
	}
	var after uint64
	if a := r.URL.Query().Get("after"); a != "" {
		v, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			resp.fail(http.StatusBadRequest, "bad_request", "after must be a warning's number")
			return
		}
		after = v
	}
	n, err := s.h.(NoticeHandler).WaitNotice(ctx, task, container, after)
	switch {
	case err == nil:
		resp.ok(http.StatusOK, encodeNotice(n))
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		resp.ok(http.StatusNoContent, nil)
	default:
		s.handlerFailed("warning", task, err)
		resp.handlerError(err)
	}
}

// maxNoticesPerTask bounds what a Board keeps for a task: the newest
// ones. A launcher that fell further behind misses the oldest.
const maxNoticesPerTask = 16

// warnBox holds the notices a Board hands out; its own lock.
type warnBox struct {
	mu      sync.Mutex
	seq     uint64
	notices map[taskspec.TaskID][]warning // oldest first, all for one container
	wake    chan struct{}                 // closed and replaced on every notice
}

type warning struct {
	container string
	notice    Notice
}

// Warn tells the launcher of task in containerID (now, or as soon as it
// asks) of n, numbered after the notices before it. A notice for another
// container of the task drops the ones kept for the earlier container.
func (b *Board) Warn(task taskspec.TaskID, containerID string, n Notice) {
	w := &b.warnings
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.notices == nil {
		w.notices = map[taskspec.TaskID][]warning{}
	}
	w.seq++
	n.Seq, n.Reason = w.seq, clip(n.Reason)
	kept := w.notices[task]
	if len(kept) > 0 && kept[0].container != containerID {
		kept = nil
	}
	if len(kept) >= maxNoticesPerTask {
		kept = kept[len(kept)-maxNoticesPerTask+1:]
	}
	w.notices[task] = append(kept, warning{container: containerID, notice: n})
	if w.wake != nil {
		close(w.wake)
		w.wake = nil
	}
}

// WaitNotice implements NoticeHandler.
func (b *Board) WaitNotice(ctx context.Context, task taskspec.TaskID, containerID string, after uint64) (Notice, error) {
	if _, ok := b.known[task]; !ok {
		return Notice{}, fmt.Errorf("%w: %s is not a task of this job", ErrUnknownTask, task)
	}
	w := &b.warnings
	for {
		w.mu.Lock()
		for _, n := range w.notices[task] {
			if n.container == containerID && n.notice.Seq > after {
				w.mu.Unlock()
				return n.notice, nil
			}
		}
		if w.wake == nil {
			w.wake = make(chan struct{})
		}
		wake := w.wake
		w.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return Notice{}, ctx.Err()
		}
	}
}
