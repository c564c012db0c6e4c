package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Preemption warnings: the ResourceManager tells the AM, some seconds
// ahead, which containers its scheduler is about to preempt. The AM
// passes the warning to the launcher of the task in that container, which
// long-polls for it while its program runs:
//
//	GET PathPrefix+"preemption?task=worker:1&container=…&wait=…" → 200 {"deadline_unix_ms":…,"reason":…} | 204 none yet
//
// A notice is for one container: a launcher in another (an earlier or a
// later attempt of the task) never sees it. An AM whose Handler is no
// PreemptionHandler answers 404 (ErrNotServed), as an AM from before it.

// PreemptionNotice is the AM warning a task that YARN will take its
// container back.
type PreemptionNotice struct {
	// Deadline is the earliest time YARN may kill the container: the
	// scheduler's wait before killing, counted from the last moment it
	// can have decided (see appmaster/core.PreemptionWarned).
	Deadline time.Time
	// Reason says who preempts and under which contract, in words.
	Reason string
}

// PreemptionHandler is what a Handler implements to pass preemption
// warnings on (the "preemption" endpoint).
type PreemptionHandler interface {
	// WaitPreemption returns the notice for task's container containerID
	// once there is one, or ctx's error when ctx ends first.
	WaitPreemption(ctx context.Context, task taskspec.TaskID, containerID string) (PreemptionNotice, error)
}

type wirePreemption struct {
	DeadlineUnixMS int64  `json:"deadline_unix_ms"`
	Reason         string `json:"reason"`
}

// Deadlines on the wire lie between 2000 and 2200: anything else is junk.
var (
	minDeadlineMS = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	maxDeadlineMS = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
)

func encodePreemption(n PreemptionNotice) []byte {
	return mustJSON(wirePreemption{DeadlineUnixMS: n.Deadline.UnixMilli(), Reason: clip(n.Reason)})
}

// DecodePreemptionNotice parses and checks the AM's answer: a deadline in
// milliseconds since the epoch (between the years 2000 and 2200) and a
// reason of printable text, at most 1024 bytes.
func DecodePreemptionNotice(body []byte) (PreemptionNotice, error) {
	var w wirePreemption
	if err := decodeJSON(body, &w); err != nil {
		return PreemptionNotice{}, fmt.Errorf("preemption notice: %w", err)
	}
	if w.DeadlineUnixMS < minDeadlineMS || w.DeadlineUnixMS > maxDeadlineMS {
		return PreemptionNotice{}, fmt.Errorf("preemption notice: deadline %d ms is not a time between 2000 and 2200", w.DeadlineUnixMS)
	}
	if len(w.Reason) > maxReasonLen || strings.ContainsFunc(w.Reason, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return PreemptionNotice{}, errors.New("preemption notice: the reason is too long or not printable text")
	}
	return PreemptionNotice{Deadline: time.UnixMilli(w.DeadlineUnixMS), Reason: w.Reason}, nil
}

// WaitPreemption long-polls until the AM warns that containerID, the
// launcher's own container, is about to be preempted, or ctx ends. An AM
// that passes on no warnings gives an error matching ErrNotServed: stop
// asking it.
func (c *Client) WaitPreemption(ctx context.Context, task taskspec.TaskID, containerID string) (PreemptionNotice, error) {
	q := url.Values{"task": {task.String()}, "container": {containerID}}
	for {
		status, body, err := c.poll(ctx, "preemption", q)
		if err != nil {
			return PreemptionNotice{}, fmt.Errorf("rendezvous: waiting for a preemption warning as %s: %w", task, err)
		}
		if status == http.StatusOK {
			n, err := DecodePreemptionNotice(body)
			if err != nil {
				return PreemptionNotice{}, fmt.Errorf("rendezvous: %w", err)
			}
			return n, nil
		}
	}
}

func (s *Server) servesPreemption() bool {
	_, ok := s.h.(PreemptionHandler)
	return ok
}

func (s *Server) preemption(r *http.Request, resp responder, container string) {
	task, ctx, cancel, ok := s.longPoll(r, resp)
	if !ok {
		return
	}
	defer cancel()
	if !s.bound(resp, "preemption", task, r.URL.Query().Get("container"), container) {
		return
	}
	n, err := s.h.(PreemptionHandler).WaitPreemption(ctx, task, container)
	switch {
	case err == nil:
		resp.ok(http.StatusOK, encodePreemption(n))
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		resp.ok(http.StatusNoContent, nil)
	default:
		s.handlerFailed("preemption", task, err)
		resp.handlerError(err)
	}
}

// warnBox holds the preemption notices a Board hands out; its own lock.
type warnBox struct {
	mu      sync.Mutex
	notices map[taskspec.TaskID]warning
	wake    chan struct{} // closed and replaced on every notice
}

type warning struct {
	container string
	notice    PreemptionNotice
}

// WarnPreemption tells the launcher of task in containerID (now, or as
// soon as it asks) that YARN is about to preempt the container. A later
// notice for the task replaces it.
func (b *Board) WarnPreemption(task taskspec.TaskID, containerID string, n PreemptionNotice) {
	w := &b.warnings
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.notices == nil {
		w.notices = map[taskspec.TaskID]warning{}
	}
	n.Reason = clip(n.Reason)
	w.notices[task] = warning{container: containerID, notice: n}
	if w.wake != nil {
		close(w.wake)
		w.wake = nil
	}
}

// WaitPreemption implements PreemptionHandler.
func (b *Board) WaitPreemption(ctx context.Context, task taskspec.TaskID, containerID string) (PreemptionNotice, error) {
	if _, ok := b.known[task]; !ok {
		return PreemptionNotice{}, fmt.Errorf("%w: %s is not a task of this job", ErrUnknownTask, task)
	}
	w := &b.warnings
	for {
		w.mu.Lock()
		if n, ok := w.notices[task]; ok && n.container == containerID {
			w.mu.Unlock()
			return n.notice, nil
		}
		if w.wake == nil {
			w.wake = make(chan struct{})
		}
		wake := w.wake
		w.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return PreemptionNotice{}, ctx.Err()
		}
	}
}
