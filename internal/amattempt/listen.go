package amattempt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/connlimit"
	"github.com/tfyarn/tfyarn/internal/refusals"
	"github.com/tfyarn/tfyarn/internal/reqsign"
)

// Bounds of a launcher's control port: a handful of announcements in its
// life, from one AM, so strangers get little.
const (
	controlMaxConns     = 8
	controlReadTimeout  = 10 * time.Second
	controlHeaderBytes  = 4 << 10
	controlIdleTimeout  = 30 * time.Second
	controlCloseTimeout = 2 * time.Second
)

// Listener is a launcher's control port: it hears a later AM attempt's
// announcement (Announce) and keeps the newest address, which Locate
// hands to the launcher's rendezvous client once its AM stops answering.
type Listener struct {
	containerID string
	key         []byte // the announcements' key (announceKey); never logged
	verifier    *reqsign.Verifier
	ln          net.Listener
	hs          *http.Server
	where       string
	now         func() time.Time

	mu      sync.Mutex
	attempt int    // the newest attempt heard (at first the launcher's own)
	am      string // its address; "" until an announcement
	refused *refusals.Log
}

// ListenConfig is what Listen needs.
type ListenConfig struct {
	// Host is the container's host (the NodeManager's): the port is bound
	// there, and where it cannot be, on every interface.
	Host        string
	ContainerID string
	// Key is the container's rendezvous key (rendezvous.ContainerKey).
	Key []byte
	// Attempt is the AM attempt that started the container: only a later
	// one is heard.
	Attempt int
	// Logf says what was refused (peer and reason, never the key).
	Logf func(string, ...any)
	// Now replaces time.Now in tests.
	Now func() time.Time

	clockSet bool
}

// Listen opens the control port and serves it until Close.
func Listen(cfg ListenConfig) (*Listener, error) {
	if cfg.Host == "" || cfg.ContainerID == "" || len(cfg.Key) == 0 {
		return nil, errors.New("amattempt: a control port needs the host, the container id and its key")
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	} else {
		cfg.clockSet = true
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, "0"))
	if err != nil {
		var aerr error
		if ln, aerr = net.Listen("tcp", ":0"); aerr != nil {
			return nil, fmt.Errorf("amattempt: control port on %s: %w", cfg.Host, err)
		}
	}
	l := &Listener{
		containerID: cfg.ContainerID, key: announceKey(cfg.Key), now: cfg.Now,
		verifier: reqsign.NewVerifier(AnnounceSkew, maxAnnounceNonces),
		attempt:  cfg.Attempt,
		ln:       connlimit.NewListener(ln, controlMaxConns, controlMaxConns),
	}
	l.where = "control port " + net.JoinHostPort(cfg.Host, strconv.Itoa(l.Port()))
	l.refused = refusals.New(l.where, cfg.Logf, refusalClock(cfg)...)
	mux := http.NewServeMux()
	mux.HandleFunc(AnnouncePath, l.serveAnnouncement)
	l.hs = connlimit.HTTPServer(mux, connlimit.ServerBounds{
		ReadHeader:     controlReadTimeout,
		Read:           controlReadTimeout,
		Write:          controlReadTimeout,
		Idle:           controlIdleTimeout,
		MaxHeaderBytes: controlHeaderBytes,
	}, nil)
	go func() { _ = l.hs.Serve(l.ln) }()
	return l, nil
}

// Port is the control port's number, announced at registration.
func (l *Listener) Port() int { return l.ln.Addr().(*net.TCPAddr).Port }

// Where names the control port for the launcher's messages.
func (l *Listener) Where() string { return l.where }

// Close stops serving.
func (l *Listener) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), controlCloseTimeout)
	defer cancel()
	_ = l.hs.Shutdown(ctx)
	l.refused.Close()
}

// refusalClock gives the refusal log the test's clock, if any.
func refusalClock(cfg ListenConfig) []refusals.Option {
	if cfg.clockSet {
		return []refusals.Option{refusals.WithClock(cfg.Now)}
	}
	return nil
}

// errNotCalled: no later attempt has announced itself yet.
var errNotCalled = errors.New("no later ApplicationMaster attempt has called yet")

// Locate is the launcher's rendezvous.Locator: the address the newest
// attempt announced.
func (l *Listener) Locate(context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.am == "" {
		return "", errNotCalled
	}
	return l.am, nil
}

func (l *Listener) serveAnnouncement(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	status, err := l.take(w, r)
	if status != http.StatusUnauthorized {
		connlimit.Trust(r.Context()) // signed by the AM
	}
	if err != nil {
		l.refuse(w, r, status, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// take checks and applies an announcement: the status to answer and why
// it was refused. The signature (package reqsign: form, MAC, time, nonce)
// is checked before a byte of the body is read.
func (l *Listener) take(w http.ResponseWriter, r *http.Request) (int, error) {
	signed, err := reqsign.Parse(announcePurpose, r)
	if err != nil {
		return http.StatusUnauthorized, err
	}
	if err := l.verifier.Verify(signed, l.key, l.now()); err != nil {
		return http.StatusUnauthorized, err
	}
	if signed.Signer != l.containerID {
		return http.StatusBadRequest, fmt.Errorf("the announcement is for container %s, not this one", signed.Signer)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxAnnouncement))
	if err != nil {
		return http.StatusRequestEntityTooLarge, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if err := signed.CheckBody(body); err != nil {
		return http.StatusUnauthorized, err
	}
	a, err := decodeAnnouncement(signed.Signer, body)
	if err != nil {
		return http.StatusBadRequest, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case a.Attempt == l.attempt && a.AM == l.am:
		return http.StatusNoContent, nil // a retry: already heard
	case a.Attempt <= l.attempt:
		return http.StatusConflict, fmt.Errorf("attempt %d is not newer than attempt %d, heard already (an old announcement replayed?)", a.Attempt, l.attempt)
	}
	l.attempt, l.am = a.Attempt, a.AM
	return http.StatusNoContent, nil
}

// refuse answers a refused call, unsigned, and logs it (package
// refusals: the first few, clipped, then a count per minute), so that
// strangers cannot fill the container's log.
func (l *Listener) refuse(w http.ResponseWriter, r *http.Request, status int, err error) {
	l.refused.Refuse(refusals.Refusal{Peer: r.RemoteAddr, Method: r.Method, Path: r.URL.Path, Reason: err.Error()})
	w.Header().Set("Connection", "close")
	http.Error(w, err.Error(), status)
}
