package rendezvous

import (
	"context"
	"errors"
	"fmt"

	"github.com/tfyarn/tfyarn/taskspec"
)

// Handler is what the server asks of the AM. Board is the ready-made one;
// the AM loop can wrap it or write its own. Every method may be called
// concurrently, once per request.
type Handler interface {
	// Register records a task's address. Registering the same task again
	// with the same address must succeed: launchers retry.
	Register(ctx context.Context, r Registration) error
	// Spec blocks until the cluster spec is published, then returns it, or
	// returns ctx's error when ctx ends first (the server turns that into
	// "not yet" and the launcher polls again). The spec returned is shared
	// by every caller: read it, never change it; a new spec is a new map
	// (the server encodes each map once for every launcher, specanswer.go).
	Spec(ctx context.Context, task taskspec.TaskID) (taskspec.ClusterSpec, error)
	// WaitStop blocks until the AM orders the task's program stopped, or
	// returns ctx's error when ctx ends first. containerID tells a stale
	// launcher from the task's current one.
	WaitStop(ctx context.Context, task taskspec.TaskID, containerID string) (StopOrder, error)
	// ReportExit records how a task's program ended. Reports are retried,
	// so the same report may come twice.
	ReportExit(ctx context.Context, e ExitReport) error
	// Authorize says whether the launcher in containerID (whose key signed
	// the request) may act as task: nil, or an error (ErrForbidden,
	// ErrUnknownTask) the server answers with. It is asked before every
	// other method, and must not block.
	Authorize(task taskspec.TaskID, containerID string) error
}

// Errors a Handler returns (wrapped, with details) for the server to give
// the launcher a precise status; the client's errors match them with
// errors.Is as well.
var (
	// ErrUnknownTask: the task is not part of the job.
	ErrUnknownTask = errors.New("unknown task")
	// ErrConflict: the registration contradicts one the AM already acted
	// on, e.g. a new address after the cluster spec went out.
	ErrConflict = errors.New("conflicting registration")
	// ErrRendezvousFailed: the spec will never be published (a task did not
	// register in time, or the job is ending). Waiting longer is useless.
	ErrRendezvousFailed = errors.New("rendezvous failed")
	// ErrUnauthorized: the server refused the request's signature.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrBadRequest: the server could not make sense of the request.
	ErrBadRequest = errors.New("bad request")
	// ErrNotServed: the AM has no such endpoint (an AM from before it, or
	// one whose Handler does not serve it).
	ErrNotServed = errors.New("endpoint not served by this AM")
	// ErrForbidden: the container that signed the request does not run
	// the task it names, or names another container.
	ErrForbidden = errors.New("not this container's task")
)

// Wire codes of the errors above, in the JSON error body.
var errorCodes = []struct {
	err    error
	code   string
	status int
}{
	{ErrUnknownTask, "unknown_task", 404},
	{ErrConflict, "conflict", 409},
	{ErrRendezvousFailed, "rendezvous_failed", 410},
	{ErrUnauthorized, "unauthorized", 401},
	{ErrBadRequest, "bad_request", 400},
	{ErrNotServed, "not_found", 404},
	{ErrForbidden, "forbidden", 403},
}

// StatusError is a refusal from the server, as the client sees it.
type StatusError struct {
	Status  int    // HTTP status
	Code    string // machine-readable code, e.g. "conflict"
	Message string // the server's explanation
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("AM refused the request (%d %s): %s", e.Status, e.Code, e.Message)
}

// Is lets errors.Is(err, ErrConflict) and the like work on the client side.
func (e *StatusError) Is(target error) bool {
	for _, c := range errorCodes {
		if c.err == target {
			return c.code == e.Code
		}
	}
	return false
}

// statusOf maps a handler's error to the wire.
func statusOf(err error) (status int, code string) {
	for _, c := range errorCodes {
		if errors.Is(err, c.err) {
			return c.status, c.code
		}
	}
	return 500, "internal"
}
