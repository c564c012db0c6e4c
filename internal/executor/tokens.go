package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/tfyarn/tfyarn/internal/atomicfile"
	"github.com/tfyarn/tfyarn/internal/pause"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TokenFileName is the program's Hadoop credentials file, in its working
// directory unless Config.TokenFile says otherwise. The launcher owns it:
// it holds the container's credentials minus the rendezvous secret, and
// the fresh tokens the AM hands out while the program runs.
const TokenFileName = ".tfyarn-tokens"

// Pauses between attempts when the AM refuses to hand out credentials or
// sends ones that cannot be written (the client itself retries an AM that
// is unreachable or busy).
const (
	tokenRetryFirst = time.Second
	tokenRetryMax   = time.Minute
)

// tokenFilePath is where the program's token file goes: absolute, so the
// program finds it whatever directory it changes to.
func tokenFilePath(cfg *Config) (string, error) {
	p := cfg.TokenFile
	if p == "" {
		p = TokenFileName
	}
	if !filepath.IsAbs(p) && cfg.Dir != "" {
		p = filepath.Join(cfg.Dir, p)
	}
	return filepath.Abs(p)
}

// tokenFile is the program's credentials file and what it holds.
type tokenFile struct {
	path  string
	creds *security.Credentials
	data  []byte
	// onChange, when set, is told the file's credentials after each
	// refresh that changed them (Config.OnFreshCredentials).
	onChange func(*security.Credentials)
}

// writeTokenFile writes creds, without the rendezvous secret or an
// AMRMToken, to path (mode 0600, atomically).
func writeTokenFile(path string, creds *security.Credentials) (*tokenFile, error) {
	c := rendezvous.TaskCredentials(creds)
	data := c.Marshal()
	if err := writeFileAtomic(path, data); err != nil {
		return nil, err
	}
	return &tokenFile{path: path, creds: c, data: data}, nil
}

// merge adds fresh to the file's credentials, replacing the tokens and
// secrets of the same aliases and keeping the others, and rewrites the
// file atomically. It reports whether the content changed (an AM that
// publishes what the container already holds changes nothing).
func (f *tokenFile) merge(fresh *security.Credentials) (bool, error) {
	merged := f.creds.Clone()
	merged.Merge(rendezvous.TaskCredentials(fresh))
	data := merged.Marshal()
	if bytes.Equal(data, f.data) {
		return false, nil
	}
	if err := writeFileAtomic(f.path, data); err != nil {
		return false, err
	}
	f.creds, f.data = merged, data
	return true, nil
}

// writeFileAtomic replaces the token file so that a reader sees the old
// file or the new one, never a part, and never readable by others.
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// credentialsWaiter is the rendezvous client's WaitCredentials.
type credentialsWaiter func(ctx context.Context, task taskspec.TaskID, after uint64) (rendezvous.CredentialsUpdate, *security.Credentials, error)

// refreshTokens long-polls the AM for new versions of its credentials and
// merges each into f until ctx ends. Failures are logged and retried with
// backoff, never fatal; an AM that does not serve credentials ends it
// quietly.
func refreshTokens(ctx context.Context, f *tokenFile, task taskspec.TaskID, wait credentialsWaiter, log *logger, first, max time.Duration) {
	var after uint64
	failures := 0
	backOff := func() bool {
		failures++
		d := first
		for i := 1; i < failures && d < max; i++ {
			d *= 2
		}
		return pause.For(ctx, min(d, max)) == nil
	}
	for ctx.Err() == nil {
		u, fresh, err := wait(ctx, task, after)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, rendezvous.ErrNotServed):
			return // an AM from before credentials refresh
		case err != nil:
			log.printf("could not get fresh credentials from the AM (will retry): %v", err)
			if !backOff() {
				return
			}
			continue
		}
		changed, err := f.merge(fresh)
		if err != nil {
			// Not advancing after: the same version comes back at once.
			log.printf("could not store version %d of the AM's credentials (will retry): %v", u.Version, err)
			if !backOff() {
				return
			}
			continue
		}
		failures = 0
		after = u.Version
		if changed {
			// Credentials' String: aliases, kinds, services and
			// fingerprints, never token or secret bytes.
			log.printf("token file %s refreshed with version %d of the AM's credentials: %s", f.path, u.Version, rendezvous.TaskCredentials(fresh))
			if f.onChange != nil {
				f.onChange(f.creds.Clone())
			}
		}
	}
}
