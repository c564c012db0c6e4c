package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/connlimit"
	"github.com/tfyarn/tfyarn/internal/refusals"
	"github.com/tfyarn/tfyarn/internal/reqsign"
	"github.com/tfyarn/tfyarn/taskspec"
)

// PathPrefix is where the rendezvous endpoints live; the AM's web UI can
// share the listener under other paths.
const PathPrefix = "/rendezvous/v1/"

// Bounds on connections (package connlimit): a stranger's connections
// share MaxUnauthenticatedConns places, the oldest closed for a new one;
// a connection that carried a signed request leaves that pool, up to
// DefaultMaxAuthenticatedConns of them (the AM sizes that from the job).
const (
	MaxUnauthenticatedConns      = 128
	DefaultMaxAuthenticatedConns = 1024
)

// StrangerBound is how many connections that signed nothing yet the AM
// keeps for a job of tasks tasks: MaxUnauthenticatedConns, or one per task
// when there are more, since every launcher connects at once when the job
// starts and holds such a place for one round trip. At 5,000 tasks the
// fixed 128 closed 9,378 launchers' first connections and made them retry
// (bench/results/scale-sim.md).
func StrangerBound(tasks int) int { return max(MaxUnauthenticatedConns, tasks) }

// HTTPServer is the http.Server the rendezvous runs under (the AM adds
// its pages to h), with what bounds a slow or hostile peer: headers of at
// most 16 KiB within 5 s, the whole request within 30 s (bodies are at
// most MaxBodyBytes sealed), a long-poll answer before WriteTimeout, and
// idle connections closed after a minute. Serve it on a
// connlimit.Listener: ConnContext is set for Trust.
func HTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	return connlimit.HTTPServer(h, connlimit.ServerBounds{
		ReadHeader:     5 * time.Second,
		Read:           30 * time.Second,
		Write:          DefaultMaxWait + 15*time.Second,
		Idle:           time.Minute,
		MaxHeaderBytes: 16 << 10,
	}, slog.NewLogLogger(log.Handler(), slog.LevelWarn))
}

// Defaults of the server's options.
const (
	DefaultMaxWait   = 25 * time.Second
	DefaultClockSkew = 5 * time.Minute
	// maxNonces bounds the replay cache: with 5 minutes of skew it allows
	// over 300 signed requests a second, far beyond any job's launchers.
	maxNonces = 200_000
)

// Server serves the rendezvous endpoints for one application.
type Server struct {
	secret  []byte // the job's; each request is checked under its container's key
	h       Handler
	log     *slog.Logger
	maxWait time.Duration
	now     func() time.Time
	// verifier checks each request's signature, time and nonce.
	verifier *reqsign.Verifier
	// programs, when set, gives each task its program with the spec.
	programs func(taskspec.TaskID) (Program, bool)
	// noCredentials: the credentials endpoint is not served (WithoutCredentials).
	noCredentials bool
	keys          keyCache // of containers that signed a request
	refused       *refusals.Log
	// specAnswers bounds the spec answers built at once: the spec's
	// publication wakes every launcher's long-poll together, and each
	// answer is the whole spec encoded, sealed and signed (145 KB at 5,000
	// tasks). Unbounded, 5,000 of them took the AM to 467 MiB and its
	// garbage collector's thrashing made the spec reach every launcher 94 s
	// after the last registered (bench/results/scale-sim.md).
	specAnswers slots
	// clusterJSON is the published spec's JSON, encoded once for every
	// launcher's answer (specanswer.go).
	clusterJSON clusterJSON
}

// slots is a counting semaphore.
type slots chan struct{}

// specAnswerSlots is how many spec answers are built at once: enough to
// keep every core busy.
func specAnswerSlots() slots { return make(slots, 4*runtime.GOMAXPROCS(0)) }

// take waits for a slot, false when ctx ends first.
func (s slots) take(ctx context.Context) bool {
	select {
	case s <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s slots) give() { <-s }

// keyCache keeps the keys of containers that authenticated, so a
// launcher's next call costs one HMAC and its body's AEAD. Only a correct
// signature puts a container in, and the cache empties when full (a job
// has at most a few thousand containers), so strangers cannot grow it.
type keyCache struct {
	mu sync.Mutex
	m  map[string]keys
}

const maxCachedKeys = 4096

func (c *keyCache) get(container string) (keys, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.m[container]
	return k, ok
}

func (c *keyCache) put(container string, k keys) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedKeys {
		c.m = map[string]keys{}
	}
	c.m[container] = k
}

// Option adjusts a Server.
type Option func(*Server)

// WithLogger sets where refusals and errors are logged (default: discard).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// withClock replaces the clock, for tests.
func withClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// NewServer returns a server that authenticates requests with secret and
// hands them to h.
func NewServer(secret []byte, h Handler, opts ...Option) (*Server, error) {
	if err := checkSecret(secret); err != nil {
		return nil, err
	}
	s := &Server{
		secret: append([]byte(nil), secret...), h: h,
		log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		maxWait: DefaultMaxWait, now: time.Now,
		verifier:    reqsign.NewVerifier(DefaultClockSkew, maxNonces),
		specAnswers: specAnswerSlots(),
	}
	for _, o := range opts {
		o(s)
	}
	s.refused = refusals.New("rendezvous", func(f string, a ...any) { s.log.Warn(fmt.Sprintf(f, a...)) })
	return s, nil
}

// Serve accepts connections on ln until ctx ends, then shuts down, giving
// requests in flight a moment. It bounds what strangers can hold (see
// HTTPServer and package connlimit).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := HTTPServer(s, s.log)
	ln = connlimit.NewListener(ln, MaxUnauthenticatedConns, DefaultMaxAuthenticatedConns)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = hs.Shutdown(sctx)
			hs.Close()
		case <-done:
		}
	}()
	err := hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// ServeHTTP authenticates the request, then dispatches it. The order
// keeps a stranger's cost to the AM small: the signed headers are checked
// (a few HMACs, no body read) before anything else; a request that fails
// them gets an unsigned refusal and its connection is closed, its body
// unread. Only then is the body read (at most its signed length) and
// checked against the signed digest, and opened.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, PathPrefix)
	if !ok {
		s.refuse(r, "no such endpoint")
		refuseUnsigned(w, http.StatusNotFound, "not_found", "no such endpoint")
		return
	}
	c, err := s.authenticate(r)
	if err != nil {
		s.refuse(r, err.Error())
		refuseUnsigned(w, http.StatusUnauthorized, "unauthorized", err.Error())
		return
	}
	body, err := s.readBody(w, r, c)
	if err != nil {
		s.refuse(r, err.Error())
		if errors.Is(err, errTooLarge) {
			refuseUnsigned(w, http.StatusRequestEntityTooLarge, "too_large", err.Error())
		} else {
			refuseUnsigned(w, http.StatusUnauthorized, "unauthorized", err.Error())
		}
		return
	}
	// From here on the request is the container's own: its connection may
	// stay, and every answer is signed for it.
	connlimit.Trust(r.Context())
	resp := responder{w: w, keys: c.keys, sig: c.request.Signature}
	method, known := routes[name]
	if !known || name == "credentials" && !s.servesCredentials() || name == "metrics" && !s.servesMetrics() || name == "warning" && !s.servesNotices() || name == "result" && !s.servesResults() {
		resp.fail(http.StatusNotFound, "not_found", "no such endpoint")
		return
	}
	if r.Method != method {
		w.Header().Set("Allow", method)
		resp.fail(http.StatusMethodNotAllowed, "method", "use "+method)
		return
	}
	switch name {
	case "register":
		s.register(r.Context(), resp, c.container, body)
	case "exit":
		s.exit(r.Context(), resp, c.container, body)
	case "spec":
		s.spec(r, resp, c.container)
	case "stop":
		s.stop(r, resp, c.container)
	case "credentials":
		s.credentials(r, resp, c.container)
	case "metrics":
		s.metrics(r.Context(), resp, c.container, body)
	case "warning":
		s.warning(r, resp, c.container)
	case "result":
		s.result(r.Context(), resp, c.container, body)
	}
}

// refuseUnsigned answers a request that is not (fully) authenticated.
// Never signed: a signed refusal of a stranger's request would be a
// signed answer an on-path attacker could hand a launcher in place of
// the AM's (say, a 404 that makes it stop refreshing its tokens). The
// connection closes after it, so the body is never read.
func refuseUnsigned(w http.ResponseWriter, status int, code, msg string) {
	h := w.Header()
	h.Set("Connection", "close")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(mustJSON(wireError{Code: code, Error: msg}))
}

var routes = map[string]string{
	"register": http.MethodPost,
	"exit":     http.MethodPost,
	"spec":     http.MethodGet,
	"stop":     http.MethodGet,
	// credentials?task=worker:0&after=N long-polls for credentials newer
	// than version N; only when the Handler is a CredentialsHandler.
	"credentials": http.MethodGet,
	// metrics: a launcher's sample of its container (metrics.go); only
	// when the Handler is a MetricsHandler.
	"metrics": http.MethodPost,
	// warning?task=worker:0&container=…&after=N: long-polls for the AM's
	// next warning for the container (warning.go): a preemption, idle
	// GPUs; only when the Handler is a NoticeHandler.
	"warning": http.MethodGet,
	// result: a chunk of a task's result file (result.go); only when the Handler is a
	// ResultHandler.
	"result": http.MethodPost,
}

// caller is an authenticated request's container and what answering it
// takes.
type caller struct {
	container string
	keys      keys
	request   reqsign.Signed // its signature binds the answer
	ad        string         // the sealed body's associated data
}

// authenticate checks the signed headers (package reqsign): form,
// signature under the named container's key, timestamp, then the nonce
// against replays.
func (s *Server) authenticate(r *http.Request) (caller, error) {
	h, err := reqsign.Parse(requestPurpose, r)
	if err != nil {
		return caller{}, err
	}
	k, cached := s.keys.get(h.Signer)
	var ck []byte
	if !cached {
		// A stranger costs three HMACs here: the cipher is set up only for
		// a container whose signature checks out.
		ck = ContainerKey(s.secret, h.Signer)
		k = keys{mac: macKey(ck)}
	}
	if err := s.verifier.Verify(h, k.mac, s.now()); err != nil {
		return caller{}, err
	}
	if !cached {
		if k, err = keysWithMAC(ck, k.mac); err != nil {
			return caller{}, err
		}
		s.keys.put(h.Signer, k)
	}
	return caller{container: h.Signer, keys: k, request: h, ad: requestAD(h.Request)}, nil
}

var errTooLarge = errors.New("body over the size limit")

// readBody reads the body of an authenticated request: exactly its
// declared length, at most a sealed MaxBodyBytes, then checks it against
// the signed digest and opens it. A GET has none.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, c caller) ([]byte, error) {
	n := r.ContentLength
	switch {
	case n < 0:
		return nil, &reqsign.Error{Reason: "a body without Content-Length"}
	case n > MaxBodyBytes+sealOverhead:
		return nil, fmt.Errorf("%w: %d bytes, more than %d sealed", errTooLarge, n, MaxBodyBytes)
	case n == 0:
		if c.request.CheckBody(nil) != nil {
			return nil, &reqsign.Error{Reason: "body shorter than signed"}
		}
		return nil, nil
	}
	wire := make([]byte, n)
	if _, err := io.ReadFull(http.MaxBytesReader(w, r.Body, n), wire); err != nil {
		return nil, &reqsign.Error{Reason: "reading the body: " + err.Error()}
	}
	if err := c.request.CheckBody(wire); err != nil {
		return nil, err
	}
	plain, err := c.keys.open(wire, c.ad)
	if err != nil {
		return nil, &reqsign.Error{Reason: err.Error()}
	}
	return plain, nil
}

// refuse logs a refused request (package refusals: the first few, each
// field clipped, then a count per minute). Only the peer, the endpoint
// and the reason: never headers, which carry the signature.
func (s *Server) refuse(r *http.Request, reason string) {
	s.refused.Refuse(refusals.Refusal{Peer: r.RemoteAddr, Method: r.Method, Path: r.URL.Path, Reason: reason})
}

func (s *Server) register(ctx context.Context, resp responder, container string, body []byte) {
	reg, err := DecodeRegistration(body)
	if err != nil {
		resp.fail(http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	if !s.bound(resp, "register", reg.Task, reg.ContainerID, container) {
		return
	}
	if err := s.h.Register(ctx, reg); err != nil {
		s.handlerFailed("register", reg.Task, err)
		resp.handlerError(err)
		return
	}
	resp.ok(http.StatusOK, []byte("{}"))
}

func (s *Server) exit(ctx context.Context, resp responder, container string, body []byte) {
	e, err := DecodeExitReport(body)
	if err != nil {
		resp.fail(http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	if !s.bound(resp, "exit", e.Task, e.ContainerID, container) {
		return
	}
	if err := s.h.ReportExit(ctx, e); err != nil {
		s.handlerFailed("exit", e.Task, err)
		resp.handlerError(err)
		return
	}
	resp.ok(http.StatusOK, []byte("{}"))
}

func (s *Server) spec(r *http.Request, resp responder, container string) {
	task, ctx, cancel, ok := s.longPoll(r, resp)
	if !ok {
		return
	}
	defer cancel()
	if !s.bound(resp, "spec", task, container, container) {
		return
	}
	cluster, err := s.h.Spec(ctx, task)
	if err == nil && !s.specAnswers.take(ctx) {
		err = ctx.Err()
	}
	switch {
	case err == nil:
		defer s.specAnswers.give()
		var program *wireProgram
		if s.programs != nil {
			if p, ok := s.programs(task); ok {
				program = p.wire()
			}
		}
		resp.okParts(http.StatusOK, specAnswerParts(s.clusterJSON.of(cluster), program)...)
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		resp.ok(http.StatusNoContent, nil)
	default:
		s.handlerFailed("spec", task, err)
		resp.handlerError(err)
	}
}

func (s *Server) stop(r *http.Request, resp responder, container string) {
	task, ctx, cancel, ok := s.longPoll(r, resp)
	if !ok {
		return
	}
	defer cancel()
	if !s.bound(resp, "stop", task, r.URL.Query().Get("container"), container) {
		return
	}
	order, err := s.h.WaitStop(ctx, task, container)
	switch {
	case err == nil:
		resp.ok(http.StatusOK, mustJSON(wireStop(order)))
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		resp.ok(http.StatusNoContent, nil)
	default:
		s.handlerFailed("stop", task, err)
		resp.handlerError(err)
	}
}

func (s *Server) servesCredentials() bool {
	_, ok := s.h.(CredentialsHandler)
	return ok && !s.noCredentials
}

func (s *Server) credentials(r *http.Request, resp responder, container string) {
	task, ctx, cancel, ok := s.longPoll(r, resp)
	if !ok {
		return
	}
	defer cancel()
	if !s.bound(resp, "credentials", task, container, container) {
		return
	}
	var after uint64
	if a := r.URL.Query().Get("after"); a != "" {
		v, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			resp.fail(http.StatusBadRequest, "bad_request", "after must be a version number")
			return
		}
		after = v
	}
	u, err := s.h.(CredentialsHandler).WaitCredentials(ctx, task, after)
	switch {
	case err == nil && (u.Version == 0 || len(u.Credentials) > MaxCredentialsBytes):
		s.handlerFailed("credentials", task, fmt.Errorf("handler returned version %d of %d bytes", u.Version, len(u.Credentials)))
		resp.fail(http.StatusInternalServerError, "internal", "bad credentials from the AM")
	case err == nil:
		resp.ok(http.StatusOK, encodeCredentials(u))
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		resp.ok(http.StatusNoContent, nil)
	default:
		s.handlerFailed("credentials", task, err)
		resp.handlerError(err)
	}
}

// longPoll reads the task and wait parameters; the wait is the client's
// to choose (its own timeouts must outlast it) but never beyond maxWait.
func (s *Server) longPoll(r *http.Request, resp responder) (taskspec.TaskID, context.Context, context.CancelFunc, bool) {
	q := r.URL.Query()
	task, err := parseTask(q.Get("task"))
	if err != nil {
		resp.fail(http.StatusBadRequest, "bad_request", err.Error())
		return taskspec.TaskID{}, nil, nil, false
	}
	wait := s.maxWait
	if ws := q.Get("wait"); ws != "" {
		ms, err := strconv.ParseInt(ws, 10, 64)
		if err != nil || ms < 0 {
			resp.fail(http.StatusBadRequest, "bad_request", "wait must be milliseconds")
			return taskspec.TaskID{}, nil, nil, false
		}
		if d := time.Duration(ms) * time.Millisecond; ms < int64(s.maxWait/time.Millisecond) {
			wait = d
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	return task, ctx, cancel, true
}

// bound checks that the container whose key signed the request speaks for
// itself (claimed, the container the request names, is the signer's) and
// for the task it runs (the Handler's Authorize), and refuses it if not:
// a launcher holds only its own container's key, so it can neither report
// for another container nor act as another task.
func (s *Server) bound(resp responder, op string, task taskspec.TaskID, claimed, container string) bool {
	err := error(nil)
	if claimed != container {
		err = fmt.Errorf("%w: signed by container %s, not %q", ErrForbidden, container, claimed)
	} else {
		err = s.h.Authorize(task, container)
	}
	if err != nil {
		s.handlerFailed(op, task, err)
		resp.handlerError(err)
		return false
	}
	return true
}

func (s *Server) handlerFailed(op string, task taskspec.TaskID, err error) {
	s.log.Info("rendezvous: request refused by the AM", "op", op, "task", task.String(), "err", err)
}

// responder writes signed, sealed responses to an authenticated request.
type responder struct {
	w    http.ResponseWriter
	keys keys   // the requesting container's
	sig  string // the request's signature
}

// ok answers with status and body, sealed; a nil body sends none.
func (r responder) ok(status int, body []byte) {
	if body == nil {
		r.okParts(status)
		return
	}
	r.okParts(status, body)
}

// okParts answers with status and the parts joined as the body, sealed
// (keys.sealParts); no parts send no body.
func (r responder) okParts(status int, parts ...[]byte) {
	h := r.w.Header()
	var wire []byte
	if parts != nil {
		var err error
		if wire, err = r.keys.sealParts(responseAD(r.sig, status), parts...); err != nil {
			// No randomness: nothing can be sent that the launcher would
			// believe, so it retries.
			http.Error(r.w, "sealing the answer failed", http.StatusInternalServerError)
			return
		}
		h.Set("Content-Type", "application/octet-stream")
	}
	h.Set(reqsign.HeaderSignature, r.keys.signResponse(r.sig, status, wire))
	r.w.WriteHeader(status)
	_, _ = r.w.Write(wire)
}

func (r responder) fail(status int, code, msg string) {
	r.ok(status, mustJSON(wireError{Code: code, Error: msg}))
}

func (r responder) handlerError(err error) {
	status, code := statusOf(err)
	r.fail(status, code, err.Error())
}
