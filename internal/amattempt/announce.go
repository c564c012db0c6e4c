package amattempt

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
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
)

// The wire form of an announcement (Announce → Listener): one POST to
// AnnouncePath whose body is the hex HMAC-SHA256 of the payload, a
// newline, and the payload, a JSON Announcement. The MAC's key is derived
// from the container's rendezvous key (rendezvous.ContainerKey) under its
// own domain string, so it is valid for nothing else and a launcher
// believes only an AM that holds the job's secret.
const (
	AnnouncePath   = "/tfyarn/am-attempt"
	announceDomain = "tfyarn-am-attempt-v1 announce"
	// MaxAnnouncement bounds the body a launcher reads.
	MaxAnnouncement = 1024
	// AnnounceSkew is how far an announcement's time may be from the
	// launcher's clock: an old message captured and replayed later is
	// refused even by a launcher that never heard the original.
	AnnounceSkew = 2 * time.Minute
	maxHostLen   = 255
	maxIDLen     = 128
	nonceBytes   = 16
)

// Announcement is what a new attempt tells an adopted task's launcher:
// it now runs at AM. Attempt only grows: a launcher takes no announcement
// from an attempt older than the newest it heard.
type Announcement struct {
	ContainerID string `json:"container"`
	Attempt     int    `json:"attempt"`
	AM          string `json:"am"`      // host:port of the new attempt's rendezvous
	SentUnixMS  int64  `json:"sent_ms"` // by the AM's clock
	// Nonce makes each message unique, so that two sends of the same
	// announcement (a retry) never share a MAC with another one.
	Nonce string `json:"nonce"`
}

// announceKey is the MAC key of announcements to the launcher holding
// containerKey.
func announceKey(containerKey []byte) []byte {
	m := hmac.New(sha256.New, containerKey)
	m.Write([]byte(announceDomain))
	return m.Sum(nil)
}

// EncodeAnnouncement is a's wire form, signed with containerKey.
func EncodeAnnouncement(containerKey []byte, a Announcement) ([]byte, error) {
	payload, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, announceKey(containerKey))
	m.Write(payload)
	out := make([]byte, 0, 2*sha256.Size+1+len(payload))
	out = hex.AppendEncode(out, m.Sum(nil))
	out = append(out, '\n')
	return append(out, payload...), nil
}

// Why an announcement is refused; none of them quotes the key or a MAC.
var (
	ErrMalformed    = errors.New("malformed announcement")
	ErrBadSignature = errors.New("bad signature (wrong key, or the announcement was altered)")
)

// DecodeAnnouncement checks wire's signature with containerKey before it
// parses a byte of the payload, then the payload's form and its time
// against now (AnnounceSkew). It is the launcher's first look at bytes
// from the network: every length is bounded.
func DecodeAnnouncement(containerKey, wire []byte, now time.Time) (Announcement, error) {
	var a Announcement
	if len(wire) > MaxAnnouncement {
		return a, fmt.Errorf("%w: %d bytes, at most %d", ErrMalformed, len(wire), MaxAnnouncement)
	}
	macHex, payload, ok := bytes.Cut(wire, []byte{'\n'})
	if !ok || len(macHex) != 2*sha256.Size {
		return a, fmt.Errorf("%w: no signature line", ErrMalformed)
	}
	mac := make([]byte, sha256.Size)
	if _, err := hex.Decode(mac, macHex); err != nil {
		return a, fmt.Errorf("%w: signature is not hex", ErrMalformed)
	}
	m := hmac.New(sha256.New, announceKey(containerKey))
	m.Write(payload)
	if !hmac.Equal(mac, m.Sum(nil)) {
		return a, ErrBadSignature
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return Announcement{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if err := a.validate(); err != nil {
		return Announcement{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if d := now.Sub(time.UnixMilli(a.SentUnixMS)); d > AnnounceSkew || d < -AnnounceSkew {
		return Announcement{}, fmt.Errorf("sent %s from this launcher's clock, more than the allowed %s (a replayed announcement, or clocks out of sync)", d.Round(time.Second), AnnounceSkew)
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
	if len(a.Nonce) != 2*nonceBytes {
		return errors.New("nonce")
	}
	if _, err := hex.DecodeString(a.Nonce); err != nil {
		return errors.New("nonce")
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
	var nonce [nonceBytes]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return err
	}
	a.Nonce = hex.EncodeToString(nonce[:])
	a.SentUnixMS = time.Now().UnixMilli()
	body, err := EncodeAnnouncement(key, a)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, announceCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
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
