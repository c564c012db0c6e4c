package rendezvous

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Client is a launcher's side of the rendezvous. It is safe for concurrent
// use: a launcher waits for a stop order while it reports other things.
type Client struct {
	mu   sync.Mutex
	base string // http://host:port; a locator may move it (locate.go)
	// What the locator keeps, under mu.
	loc          *LocatorConfig
	reg          *Registration // the last registration, made again after a move
	failingSince time.Time     // the AM at base has not answered since; zero when it has
	lastLookup   time.Time
	looked       bool
	lookupErr    error
	gaveUp       error
	container    string // the launcher's container: its key signs every request
	keys         keys
	hc           *http.Client
	wait         time.Duration // long-poll duration asked of the server
	attemptTO    time.Duration // bound on one plain request
	backoff      backoff
	now          func() time.Time
}

// ClientOption adjusts a Client.
type ClientOption func(*Client)

// WithLongPoll sets how long one long-poll request asks the server to
// wait; keep it under the server's MaxWait and any proxy's idle timeout.
func WithLongPoll(d time.Duration) ClientOption { return func(c *Client) { c.wait = d } }

// WithBackoff sets the first and the longest pause between retries.
func WithBackoff(first, max time.Duration) ClientOption {
	return func(c *Client) { c.backoff = backoff{first: first, max: max} }
}

// NewClient returns a client of the rendezvous server at amAddr
// ("host:port") for the launcher in containerID, whose key (ContainerKey
// of the job's secret) is key.
func NewClient(amAddr, containerID string, key []byte, opts ...ClientOption) (*Client, error) {
	if _, _, err := net.SplitHostPort(amAddr); err != nil {
		return nil, fmt.Errorf("rendezvous: AM address %q: %w", amAddr, err)
	}
	if containerID == "" {
		return nil, errors.New("rendezvous: no container id to sign as")
	}
	if err := checkID("container id", containerID); err != nil {
		return nil, fmt.Errorf("rendezvous: %w", err)
	}
	k, err := newKeys(key)
	if err != nil {
		return nil, err
	}
	c := &Client{
		base:      "http://" + amAddr,
		container: containerID,
		keys:      k,
		hc: &http.Client{
			Transport: &http.Transport{
				// Never through an HTTP proxy from the container's
				// environment: the AM is on the cluster's own network.
				Proxy:               nil,
				DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
				MaxIdleConnsPerHost: 4,
				IdleConnTimeout:     90 * time.Second,
			},
			// Redirects would be followed without a signature: refuse them.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		wait:      20 * time.Second,
		attemptTO: 15 * time.Second,
		backoff:   backoff{first: 100 * time.Millisecond, max: 5 * time.Second},
		now:       time.Now,
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Close releases idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Register tells the AM the task's address, retrying until the AM answers
// or ctx ends.
func (c *Client) Register(ctx context.Context, r Registration) error {
	if err := r.validate(); err != nil {
		return fmt.Errorf("rendezvous: registration of %s: %w", r.Task, err)
	}
	c.mu.Lock()
	c.reg = &r
	c.mu.Unlock()
	_, _, err := c.call(ctx, http.MethodPost, "register", nil, encodeRegistration(r), 0)
	if err != nil {
		return fmt.Errorf("rendezvous: registering %s at %s: %w", r.Task, r.Addr(), err)
	}
	return nil
}

// WaitSpec long-polls until the AM publishes the cluster spec, the AM says
// it never will (ErrRendezvousFailed), or ctx ends. Give ctx the overall
// deadline.
func (c *Client) WaitSpec(ctx context.Context, task taskspec.TaskID) (taskspec.ClusterSpec, error) {
	ts, err := c.WaitTaskSpec(ctx, task)
	return ts.Cluster, err
}

// WaitTaskSpec is WaitSpec with the program the AM gives the task, if any.
func (c *Client) WaitTaskSpec(ctx context.Context, task taskspec.TaskID) (TaskSpec, error) {
	return longPollFor(ctx, c, "spec", url.Values{"task": {task.String()}}, "the cluster spec as "+task.String(), decodeSpec)
}

// longPollFor long-polls the AM's op until it answers, decoded by decode,
// or ctx ends; what names the wait in the error.
func longPollFor[T any](ctx context.Context, c *Client, op string, q url.Values, what string, decode func([]byte) (T, error)) (T, error) {
	var zero T
	for {
		status, body, err := c.poll(ctx, op, q)
		if err != nil {
			return zero, fmt.Errorf("rendezvous: waiting for %s: %w", what, err)
		}
		if status == http.StatusOK {
			v, err := decode(body)
			if err != nil {
				return zero, fmt.Errorf("rendezvous: %w", err)
			}
			return v, nil
		}
	}
}

// WaitStop long-polls until the AM orders the task stopped or ctx ends.
// containerID is the launcher's own container, so an order meant for an
// earlier attempt of the task is not obeyed.
func (c *Client) WaitStop(ctx context.Context, task taskspec.TaskID, containerID string) (StopOrder, error) {
	q := url.Values{"task": {task.String()}, "container": {containerID}}
	return longPollFor(ctx, c, "stop", q, "a stop order as "+task.String(), decodeStop)
}

// maxResponseBytes bounds what the client reads of an answer; a longer one
// fails its signature check.
const maxResponseBytes = maxCredentialsBody + sealOverhead + 1<<10

// WaitCredentials long-polls until the AM has credentials of another
// version than after (0: any), or ctx ends. It returns them parsed as
// well. An AM that does not hand out credentials gives an error matching
// ErrNotServed: stop asking it.
func (c *Client) WaitCredentials(ctx context.Context, task taskspec.TaskID, after uint64) (CredentialsUpdate, *security.Credentials, error) {
	q := url.Values{"task": {task.String()}, "after": {strconv.FormatUint(after, 10)}}
	type update struct {
		u     CredentialsUpdate
		creds *security.Credentials
	}
	got, err := longPollFor(ctx, c, "credentials", q, fmt.Sprintf("credentials newer than version %d as %s", after, task), func(body []byte) (update, error) {
		u, creds, err := DecodeCredentials(body)
		return update{u, creds}, err
	})
	return got.u, got.creds, err
}

// ReportExit tells the AM how the task's program ended. The stderr tail is
// clipped to fit a message. Bound ctx: this is best effort, the AM also
// learns the exit status from YARN.
func (c *Client) ReportExit(ctx context.Context, e ExitReport) error {
	e.StderrTail = ClipStderr(e.StderrTail)
	body := encodeExit(e)
	for len(body) > MaxBodyBytes && len(e.StderrTail) > 0 {
		e.StderrTail = e.StderrTail[1:]
		body = encodeExit(e)
	}
	if _, _, err := c.call(ctx, http.MethodPost, "exit", nil, body, 0); err != nil {
		return fmt.Errorf("rendezvous: reporting the exit of %s: %w", e.Task, err)
	}
	return nil
}

// poll does one long-poll request. A "not yet" that came back much sooner
// than asked (a server with a shorter MaxWait) is followed by a pause, so a
// launcher never spins against the AM.
func (c *Client) poll(ctx context.Context, endpoint string, q url.Values) (int, []byte, error) {
	start := time.Now()
	status, body, err := c.call(ctx, http.MethodGet, endpoint, q, nil, c.wait)
	if err == nil && status == http.StatusNoContent && time.Since(start) < c.wait/2 {
		if err := c.backoff.sleep(ctx, 1); err != nil {
			return 0, nil, err
		}
	}
	return status, body, err
}

// call does one logical request: attempts with backoff while the AM is
// unreachable or busy, none after a definite answer. It returns 200 and
// 204 answers; every other status is an error.
func (c *Client) call(ctx context.Context, method, endpoint string, q url.Values, body []byte, wait time.Duration) (int, []byte, error) {
	if wait > 0 {
		if q == nil {
			q = url.Values{}
		}
		q.Set("wait", strconv.FormatInt(wait.Milliseconds(), 10))
	}
	var lastErr error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if err := c.backoff.sleep(ctx, attempt); err != nil {
				return 0, nil, fmt.Errorf("%w (last error: %w)", err, lastErr)
			}
		}
		c.mu.Lock()
		base, gaveUp := c.base, c.gaveUp
		c.mu.Unlock()
		if gaveUp != nil {
			return 0, nil, gaveUp
		}
		started := c.now()
		status, respBody, err := c.attempt(ctx, base, method, endpoint, q, body, wait)
		switch {
		case err == nil:
			c.reached(base)
			return status, respBody, nil
		case ctx.Err() != nil:
			// This attempt was most likely cut by ctx itself: the last error
			// worth naming is the one before it (an answer that did not
			// verify, say), when there was one.
			if lastErr == nil {
				lastErr = err
			}
			return 0, nil, fmt.Errorf("%w (last error: %w)", ctx.Err(), lastErr)
		case !retryable(err):
			return 0, nil, err
		}
		if lerr := c.unreachable(ctx, base, started, err); lerr != nil {
			return 0, nil, lerr
		}
		lastErr = err
	}
}

// transientError marks what another attempt may cure: the AM not
// listening yet, a dropped connection, a 5xx answer.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// unverifiedError is an answer that does not verify under the container's
// key: unsigned (a refusal of our signature, or a stranger's answer), or
// signed for another request or with another key. It matches
// ErrUnauthorized.
type unverifiedError struct {
	where  string
	status int
	why    error
	reason string // an unsigned refusal's explanation, clipped
}

func (e *unverifiedError) Error() string {
	return fmt.Sprintf("the answer from %s did not verify (HTTP %d, %v; it says: %s): taken for no answer; if it persists, a stranger holds the AM's port or this launcher has the wrong container key",
		e.where, e.status, e.why, e.reason)
}

func (e *unverifiedError) Unwrap() error { return ErrUnauthorized }

func retryable(err error) bool {
	var t *transientError
	return errors.As(err, &t)
}

func (c *Client) attempt(ctx context.Context, base, method, endpoint string, q url.Values, body []byte, wait time.Duration) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.attemptTO+wait)
	defer cancel()
	u := base + PathPrefix + endpoint
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("building request: %w", err)
	}
	wire, sent, err := c.keys.sign(req, c.container, body, c.now())
	if err != nil {
		return 0, nil, err
	}
	if wire != nil {
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Body = io.NopCloser(bytes.NewReader(wire))
		req.ContentLength = int64(len(wire))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(wire)), nil }
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, &transientError{err}
	}
	defer resp.Body.Close()
	// A cluster spec of thousands of tasks fits in well under 1 MiB; the
	// credentials answer is bounded by maxCredentialsBody.
	wireResp, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return 0, nil, &transientError{fmt.Errorf("reading response: %w", err)}
	}
	// Only a signed answer to this very request counts: an unsigned one
	// (a refusal, or anyone's) is never taken for the AM's word.
	respBody, err := c.keys.checkResponse(sent, resp.StatusCode, resp.Header, wireResp)
	if err != nil {
		// Not the AM's word, so no answer at all: whoever holds a dead
		// attempt's port could answer so (say, 401) to pin the launcher
		// there. Retried, and the locator asked for a new attempt.
		return 0, nil, &transientError{&unverifiedError{where: base[len("http://"):], status: resp.StatusCode, why: err, reason: unsignedReason(wireResp)}}
	}
	switch {
	case resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNoContent:
		return resp.StatusCode, respBody, nil
	case resp.StatusCode >= 500:
		return 0, nil, &transientError{statusError(resp.StatusCode, respBody)}
	default:
		return 0, nil, statusError(resp.StatusCode, respBody)
	}
}

func statusError(status int, body []byte) error {
	var w wireError
	if err := decodeJSON(body, &w); err != nil || w.Code == "" {
		return &StatusError{Status: status, Code: "http_" + strconv.Itoa(status), Message: http.StatusText(status)}
	}
	return &StatusError{Status: status, Code: w.Code, Message: w.Error}
}

// unsignedReason is the explanation in an unsigned refusal, for the
// launcher's message only: bounded, printable.
func unsignedReason(body []byte) string {
	var w wireError
	if decodeJSON(body, &w) != nil || w.Error == "" {
		return "no reason given"
	}
	return strings.ToValidUTF8(clip(strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, w.Error)), "")
}
