package rendezvous

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/taskspec"
)

// MaxCredentialsBytes bounds the Hadoop credentials (token storage bytes)
// the AM hands out in one answer: hundreds of delegation tokens fit.
const MaxCredentialsBytes = 1 << 20

// maxCredentialsBody bounds the JSON answer carrying them (base64 grows
// them by a third).
const maxCredentialsBody = MaxCredentialsBytes/3*4 + 4 + 256

// CredentialsHandler is what a Handler implements to hand fresh Hadoop
// credentials to the launchers (the "credentials" endpoint). A Handler
// without it answers that endpoint with 404, as an AM from before it did.
type CredentialsHandler interface {
	// WaitCredentials returns the credentials published last when their
	// version differs from after (a newer one, or after is a version this
	// AM never issued: a restarted AM counts from 1 again), else blocks
	// until a new version is published or ctx ends (then ctx's error).
	WaitCredentials(ctx context.Context, task taskspec.TaskID, after uint64) (CredentialsUpdate, error)
}

// CredentialsUpdate is one version of the task-facing credentials.
type CredentialsUpdate struct {
	Version uint64 // 1, 2, …: increases with every change
	// Credentials are Hadoop's token storage ("HDTS", Writable format):
	// never an AMRMToken, never the rendezvous secret.
	Credentials []byte
}

// Parse decodes the update's credentials.
func (u CredentialsUpdate) Parse() (*security.Credentials, error) {
	return security.ParseCredentials(u.Credentials)
}

// TaskCredentials is what tasks may hold of creds: no AMRMToken (a task
// holding it could impersonate the AM towards the RM) and no rendezvous
// secret (the user's program must not be able to sign as a launcher).
func TaskCredentials(creds *security.Credentials) *security.Credentials {
	if creds == nil {
		return security.NewCredentials()
	}
	c := creds.Without(security.KindAMRMToken)
	c.RemoveSecret(SecretAlias)
	return c
}

// credsBox holds the published credentials; a Board has one.
type credsBox struct {
	mu      sync.Mutex
	version uint64
	data    []byte
	wake    chan struct{} // closed and replaced on every new version
}

// PublishCredentials makes creds, stripped by TaskCredentials, the
// launchers' newest credentials and returns their version. Publishing the
// same content again keeps the version (launchers are not woken for
// nothing). Credentials over MaxCredentialsBytes are refused.
func (b *Board) PublishCredentials(creds *security.Credentials) (uint64, error) {
	data := TaskCredentials(creds).Marshal()
	if len(data) > MaxCredentialsBytes {
		return 0, fmt.Errorf("rendezvous: credentials of %d bytes exceed %d", len(data), MaxCredentialsBytes)
	}
	c := &b.creds
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version > 0 && bytes.Equal(c.data, data) {
		return c.version, nil
	}
	c.version++
	c.data = data
	if c.wake != nil {
		close(c.wake)
	}
	c.wake = make(chan struct{})
	return c.version, nil
}

// PublishedCredentials returns the newest published credentials (Version
// 0: none yet).
func (b *Board) PublishedCredentials() CredentialsUpdate {
	c := &b.creds
	c.mu.Lock()
	defer c.mu.Unlock()
	return CredentialsUpdate{Version: c.version, Credentials: append([]byte(nil), c.data...)}
}

// WaitCredentials implements CredentialsHandler.
func (b *Board) WaitCredentials(ctx context.Context, task taskspec.TaskID, after uint64) (CredentialsUpdate, error) {
	b.mu.Lock()
	_, known := b.known[task]
	b.mu.Unlock()
	if !known {
		return CredentialsUpdate{}, fmt.Errorf("%w: %s is not a task of this job", ErrUnknownTask, task)
	}
	c := &b.creds
	for {
		c.mu.Lock()
		if c.version > 0 && c.version != after {
			u := CredentialsUpdate{Version: c.version, Credentials: c.data} // data is never modified in place
			c.mu.Unlock()
			return u, nil
		}
		if c.wake == nil {
			c.wake = make(chan struct{})
		}
		wake := c.wake
		c.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return CredentialsUpdate{}, ctx.Err()
		}
	}
}

type wireCredentials struct {
	Version     uint64 `json:"version"`
	Credentials []byte `json:"credentials"` // base64 in JSON
}

func encodeCredentials(u CredentialsUpdate) []byte {
	return mustJSON(wireCredentials(u))
}

// DecodeCredentials parses and checks an answer of the credentials
// endpoint: a version of at least 1 and a credentials file that parses and
// fits MaxCredentialsBytes.
func DecodeCredentials(body []byte) (CredentialsUpdate, *security.Credentials, error) {
	if len(body) > maxCredentialsBody {
		return CredentialsUpdate{}, nil, fmt.Errorf("credentials: answer of %d bytes exceeds %d", len(body), maxCredentialsBody)
	}
	var w wireCredentials
	if err := decodeJSONLimit(body, &w, maxCredentialsBody); err != nil {
		return CredentialsUpdate{}, nil, fmt.Errorf("credentials: %w", err)
	}
	if w.Version == 0 {
		return CredentialsUpdate{}, nil, errors.New("credentials: missing version")
	}
	if len(w.Credentials) > MaxCredentialsBytes {
		return CredentialsUpdate{}, nil, fmt.Errorf("credentials: %d bytes exceed %d", len(w.Credentials), MaxCredentialsBytes)
	}
	creds, err := security.ParseCredentials(w.Credentials)
	if err != nil {
		return CredentialsUpdate{}, nil, fmt.Errorf("credentials (version %d): %w", w.Version, err)
	}
	return CredentialsUpdate(w), creds, nil
}
