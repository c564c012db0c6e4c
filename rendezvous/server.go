package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// PathPrefix is where the rendezvous endpoints live; the AM's web UI can
// share the listener under other paths.
const PathPrefix = "/rendezvous/v1/"

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
	signer  signer
	h       Handler
	log     *slog.Logger
	maxWait time.Duration
	skew    time.Duration
	now     func() time.Time
	nonces  *replayCache
	// programs, when set, gives each task its program with the spec.
	programs func(taskspec.TaskID) (Program, bool)
}

// Option adjusts a Server.
type Option func(*Server)

// WithLogger sets where refusals and errors are logged (default: discard).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithMaxWait bounds how long one long-poll request is held open.
func WithMaxWait(d time.Duration) Option { return func(s *Server) { s.maxWait = d } }

// WithClockSkew sets how far a request's timestamp may be from the
// server's clock. Launchers run on other nodes; NTP keeps them within
// seconds, but a freshly booted node may lag.
func WithClockSkew(d time.Duration) Option { return func(s *Server) { s.skew = d } }

// withClock replaces the clock, for tests.
func withClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// NewServer returns a server that authenticates requests with secret and
// hands them to h.
func NewServer(secret []byte, h Handler, opts ...Option) (*Server, error) {
	sg, err := newSigner(secret)
	if err != nil {
		return nil, err
	}
	s := &Server{
		signer: sg, h: h,
		log:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		maxWait: DefaultMaxWait, skew: DefaultClockSkew, now: time.Now,
		nonces: newReplayCache(maxNonces),
	}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// Serve accepts connections on ln until ctx ends, then shuts down, giving
// requests in flight a moment. The timeouts bound what a slow or hostile
// peer can hold: headers must come within 10 s, the whole request within
// 30 s, and a long-poll answer goes out before WriteTimeout.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      s.maxWait + 15*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
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

// ServeHTTP authenticates the request, then dispatches it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resp := responder{w: w, signer: s.signer, nonce: r.Header.Get(HeaderNonce)}
	name, ok := strings.CutPrefix(r.URL.Path, PathPrefix)
	method, known := routes[name]
	if !ok || !known || name == "credentials" && !s.servesCredentials() || name == "metrics" && !s.servesMetrics() || name == "preemption" && !s.servesPreemption() {
		resp.fail(http.StatusNotFound, "not_found", "no such endpoint")
		return
	}
	if r.Method != method {
		w.Header().Set("Allow", method)
		resp.fail(http.StatusMethodNotAllowed, "method", "use "+method)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.refuse(r, "body over the size limit")
			resp.fail(http.StatusRequestEntityTooLarge, "too_large", "body exceeds "+strconv.Itoa(MaxBodyBytes)+" bytes")
			return
		}
		resp.fail(http.StatusBadRequest, "bad_request", "reading body: "+err.Error())
		return
	}
	if err := s.authenticate(r, body); err != nil {
		s.refuse(r, err.Error())
		resp.fail(http.StatusUnauthorized, "unauthorized", err.Error())
		return
	}
	switch name {
	case "register":
		s.register(r.Context(), resp, body)
	case "exit":
		s.exit(r.Context(), resp, body)
	case "spec":
		s.spec(r, resp)
	case "stop":
		s.stop(r, resp)
	case "credentials":
		s.credentials(r, resp)
	case "metrics":
		s.metrics(r.Context(), resp, body)
	case "preemption":
		s.preemption(r, resp)
	}
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
	// preemption?task=worker:0&container=…: long-polls for a warning that
	// YARN will preempt the container (preemption.go); only when the
	// Handler is a PreemptionHandler.
	"preemption": http.MethodGet,
}

func (s *Server) authenticate(r *http.Request, body []byte) error {
	now := s.now()
	v, err := s.signer.verify(r, body, now, s.skew)
	if err != nil {
		return err
	}
	return s.nonces.add(v.nonce, now, v.at.Add(s.skew+time.Second))
}

// refuse logs a refused request. Only the peer, the endpoint and the
// reason: never headers, which carry the signature.
func (s *Server) refuse(r *http.Request, reason string) {
	s.log.Warn("rendezvous: refused request", "remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path, "reason", reason)
}

func (s *Server) register(ctx context.Context, resp responder, body []byte) {
	reg, err := DecodeRegistration(body)
	if err != nil {
		resp.fail(http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	if err := s.h.Register(ctx, reg); err != nil {
		s.handlerFailed("register", reg.Task, err)
		resp.handlerError(err)
		return
	}
	resp.ok(http.StatusOK, []byte("{}"))
}

func (s *Server) exit(ctx context.Context, resp responder, body []byte) {
	e, err := DecodeExitReport(body)
	if err != nil {
		resp.fail(http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	if err := s.h.ReportExit(ctx, e); err != nil {
		s.handlerFailed("exit", e.Task, err)
		resp.handlerError(err)
		return
	}
	resp.ok(http.StatusOK, []byte("{}"))
}

func (s *Server) spec(r *http.Request, resp responder) {
	task, ctx, cancel, ok := s.longPoll(r, resp)
	if !ok {
		return
	}
	defer cancel()
	cluster, err := s.h.Spec(ctx, task)
	switch {
	case err == nil:
		w := wireSpec{Cluster: cluster}
		if s.programs != nil {
			if p, ok := s.programs(task); ok {
				w.Program = p.wire()
			}
		}
		resp.ok(http.StatusOK, mustJSON(w))
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		resp.ok(http.StatusNoContent, nil)
	default:
		s.handlerFailed("spec", task, err)
		resp.handlerError(err)
	}
}

func (s *Server) stop(r *http.Request, resp responder) {
	task, ctx, cancel, ok := s.longPoll(r, resp)
	if !ok {
		return
	}
	defer cancel()
	container := r.URL.Query().Get("container")
	if err := checkID("container id", container); err != nil {
		resp.fail(http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	order, err := s.h.WaitStop(ctx, task, container)
	switch {
	case err == nil:
		resp.ok(http.StatusOK, mustJSON(wireStop{Reason: order.Reason}))
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		resp.ok(http.StatusNoContent, nil)
	default:
		s.handlerFailed("stop", task, err)
		resp.handlerError(err)
	}
}

func (s *Server) servesCredentials() bool {
	_, ok := s.h.(CredentialsHandler)
	return ok
}

func (s *Server) credentials(r *http.Request, resp responder) {
	task, ctx, cancel, ok := s.longPoll(r, resp)
	if !ok {
		return
	}
	defer cancel()
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

func (s *Server) handlerFailed(op string, task taskspec.TaskID, err error) {
	s.log.Info("rendezvous: request refused by the AM", "op", op, "task", task.String(), "err", err)
}

// responder writes signed responses.
type responder struct {
	w      http.ResponseWriter
	signer signer
	nonce  string
}

func (r responder) ok(status int, body []byte) {
	h := r.w.Header()
	if body != nil {
		h.Set("Content-Type", "application/json")
	}
	h.Set(HeaderSignature, hexMAC(r.signer.responseMAC(r.nonce, status, body)))
	r.w.WriteHeader(status)
	_, _ = r.w.Write(body)
}

func (r responder) fail(status int, code, msg string) {
	r.ok(status, mustJSON(wireError{Code: code, Error: msg}))
}

func (r responder) handlerError(err error) {
	status, code := statusOf(err)
	r.fail(status, code, err.Error())
}
