package amattempt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/tfyarn/tfyarn/internal/pause"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/reqsign"
)

// The wire form of an announcement (Announce → Listener): one POST to
// AnnouncePath whose body is the JSON of an Announcement's attempt and
// address, signed for the container (package reqsign: its headers name
// the container, a timestamp, a nonce and the body's digest) with a key
// derived from the container's rendezvous key (rendezvous.ContainerKey)
// under a purpose of its own, so it is valid for nothing else and a
// launcher believes only an AM that holds the job's secret.
const (
	AnnouncePath = "/tfyarn/am-attempt"
	// announceKeyPurpose derives the key, announcePurpose is the request
	// signature's domain.
	announceKeyPurpose = "tfyarn-am-attempt-v2 key"
	announcePurpose    = "tfyarn-am-attempt-v2 announce"
	// MaxAnnouncement bounds the body a launcher reads.
	MaxAnnouncement = 1024
	// AnnounceSkew is how far an announcement's time may be from the
	// launcher's clock: an old message captured and replayed later is
	// refused even by a launcher that never heard the original.
	AnnounceSkew = 2 * time.Minute
	// maxAnnounceNonces bounds the launcher's replay cache: an AM sends
	// a launcher a few dozen calls at most (Announce's retries) within
	// the window, and only calls signed with the key take a place.
	maxAnnounceNonces = 256
	maxHostLen        = 255
	maxIDLen          = 128
)

// Announcement is what a new attempt tells an adopted task's launcher:
// it now runs at AM. Attempt only grows: a launcher takes no announcement
// from an attempt older than the newest it heard.
type Announcement struct {
	// ContainerID is the launcher's container, whose key signs: it
	// travels as the signer (reqsign.HeaderSigner), not in the body.
	ContainerID string
	Attempt     int
	AM          string // host:port of the new attempt's rendezvous
}

// announcementBody is an announcement's signed JSON body.
type announcementBody struct {
	Attempt int    `json:"attempt"`
	AM      string `json:"am"`
}

// announceKey is the MAC key of announcements to the launcher holding
// containerKey.
func announceKey(containerKey []byte) []byte {
	return reqsign.DeriveKey(containerKey, announceKeyPurpose)
}

// NewAnnouncementRequest is the POST of a to url (a launcher's control
// port and AnnouncePath), signed at now with containerKey, the key of
// a.ContainerID.
func NewAnnouncementRequest(ctx context.Context, url string, containerKey []byte, a Announcement, now time.Time) (*http.Request, error) {
	body, err := json.Marshal(announcementBody{Attempt: a.Attempt, AM: a.AM})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	r, err := reqsign.NewRequest(announcePurpose, req.Method, req.URL.RequestURI(), a.ContainerID, now)
	if err != nil {
		return nil, err
	}
	r.Sign(announceKey(containerKey), body, req.Header)
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// ErrMalformed is why a correctly signed announcement is refused for its
// form; none of the refusals quotes the key or a MAC.
var ErrMalformed = errors.New("malformed announcement")

// decodeAnnouncement parses the body of an announcement to container,
// whose signature checked out; every length is bounded.
func decodeAnnouncement(container string, body []byte) (Announcement, error) {
	var b announcementBody
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return Announcement{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	a := Announcement{ContainerID: container, Attempt: b.Attempt, AM: b.AM}
	if err := a.validate(); err != nil {
		return Announcement{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return a, nil
}

func (a Announcement) validate() error {
	if a.ContainerID == "" || len(a.ContainerID) > maxIDLen {
		return fmt.Errorf("container id of %d bytes", len(a.ContainerID))
	}
	if a.Attempt < 1 {
		return fmt.Errorf("attempt %d", a.Attempt)
	}
	host, port, err := net.SplitHostPort(a.AM)
	if err != nil {
		return fmt.Errorf("AM address: %w", err)
	}
	if host == "" || len(host) > maxHostLen {
		return fmt.Errorf("AM host of %d bytes", len(host))
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("AM port %q", port)
	}
	return nil
}

// announceCallTimeout bounds one call to a launcher; announceFor bounds
// the retries to one launcher (its program may still be starting its
// listener's accept loop, or the network flapping).
const (
	announceCallTimeout = 10 * time.Second
	announceFor         = 2 * time.Minute
)

// Announce tells the launcher of t, adopted by attempt, that this attempt
// runs at am, signed with that container's key derived from the job's
// secret, retrying until it answered or announceFor passed. A launcher
// that refuses (it heard a newer attempt, or the signature) is not asked
// again.
func Announce(ctx context.Context, secret []byte, attempt int, am string, t Task) error {
	if t.Control < 1 || t.Control > 65535 {
		return fmt.Errorf("%s's launcher announced no control port", t.Task)
	}
	ctx, cancel := context.WithTimeout(ctx, announceFor)
	defer cancel()
	url := "http://" + net.JoinHostPort(t.Host, strconv.Itoa(t.Control)) + AnnouncePath
	hc := &http.Client{Timeout: announceCallTimeout}
	defer hc.CloseIdleConnections()
	key := rendezvous.ContainerKey(secret, t.ContainerID)
	delay := 250 * time.Millisecond
	for {
		err := announceOnce(ctx, hc, url, key, Announcement{ContainerID: t.ContainerID, Attempt: attempt, AM: am})
		var refused *refusedError
		if err == nil || errors.As(err, &refused) {
			return err
		}
		if pause.For(ctx, delay) != nil {
			return fmt.Errorf("calling %s's launcher at %s: %w", t.Task, url, err)
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// refusedError is a launcher's refusal: final, not retried.
type refusedError struct {
	status int
	reason string
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("the launcher refused (%d): %s", e.status, e.reason)
}

func announceOnce(ctx context.Context, hc *http.Client, url string, key []byte, a Announcement) error {
	ctx, cancel := context.WithTimeout(ctx, announceCallTimeout)
	defer cancel()
	req, err := NewAnnouncementRequest(ctx, url, key, a, time.Now())
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	reason, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode == http.StatusNoContent:
		return nil
	case resp.StatusCode >= 500:
		return fmt.Errorf("the launcher answered %d: %s", resp.StatusCode, bytes.TrimSpace(reason))
	default:
		return &refusedError{status: resp.StatusCode, reason: string(bytes.TrimSpace(reason))}
	}
}
