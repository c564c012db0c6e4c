package hdfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/pause"
)

// Upload retry defaults.
const (
	// DefaultUploadAttempts bounds how often a cache upload is tried in all.
	DefaultUploadAttempts = 3
	// DefaultRetryBackoff is the pause before the second attempt; it doubles.
	DefaultRetryBackoff = time.Second
)

// UploadOptions tune UploadCachedOptions. The zero value retries with the defaults.
type UploadOptions struct {
	// Progress, if set, follows the upload (see ProgressFunc). It is not
	// called when the cache already holds the file.
	Progress ProgressFunc
	// Attempts bounds the tries: a DataNode pipeline that breaks mid-stream
	// (colinmarc/hdfs then fails the write; it cannot recover the pipeline
	// the way Hadoop's DFSOutputStream does) makes the whole file go again to
	// a fresh temporary name. 0: DefaultUploadAttempts; 1: no retry.
	Attempts int
	// Backoff is the pause before the second attempt, doubled after each
	// further failure. 0: DefaultRetryBackoff.
	Backoff time.Duration
	// SHA256 is the file's hex SHA-256 when the caller knows it already
	// (envpack.Pack computes it while writing the archive): it saves reading
	// the file twice. The upload still hashes what it sends and fails,
	// leaving nothing in the cache, if the two differ.
	SHA256 string
	// Access is who may read the file in the user's own cache (Public, the
	// zero value, or Private). A shared cache directory's entries are
	// always readable by all: using one is the user's choice to share.
	Access Access
}

// knownDigest returns opts.SHA256 and the file's size, or "" when not set.
func (o UploadOptions) knownDigest(localPath string) (string, int64, error) {
	if o.SHA256 == "" {
		return "", 0, nil
	}
	if !digestRE.MatchString(o.SHA256) {
		return "", 0, fmt.Errorf("invalid SHA-256 %q: expected 64 lowercase hex digits", o.SHA256)
	}
	st, err := os.Stat(localPath)
	if err != nil {
		return "", 0, err
	}
	if !st.Mode().IsRegular() {
		return "", 0, errors.New("not a regular file")
	}
	return o.SHA256, st.Size(), nil
}

func (o UploadOptions) withDefaults() UploadOptions {
	if o.Attempts <= 0 {
		o.Attempts = DefaultUploadAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultRetryBackoff
	}
	return o
}

// writeTempFunc writes src to the temporary file tmp (in dir).
type writeTempFunc func(ctx context.Context, dir, tmp string, src io.Reader) (written, error)

// writeTempRetrying writes the content open gives to a temporary file
// beside name in dir, retrying failed attempts, each under a fresh temporary
// name, after removing the failed attempt's file. It returns the temporary
// path that holds the complete content, or the last attempt's error.
func writeTempRetrying(ctx context.Context, dir, name string, size int64, open func() (io.ReadCloser, error),
	opts UploadOptions, write writeTempFunc, remove func(string)) (string, written, error) {
	opts = opts.withDefaults()
	backoff := opts.Backoff
	for attempt := 1; ; attempt++ {
		tmpName, err := tempName(name)
		if err != nil {
			return "", written{}, err
		}
		tmp := path.Join(dir, tmpName)
		src, err := open()
		if err != nil {
			return "", written{}, err
		}
		w, err := write(ctx, dir, tmp, withProgress(localReader{src}, size, opts.Progress))
		src.Close()
		if err == nil {
			return tmp, w, nil
		}
		// writeFile removes its partial file already; this also covers a
		// create that succeeded on the NameNode but whose answer was lost.
		remove(tmp)
		if attempt >= opts.Attempts || !retryable(ctx, err) {
			if attempt > 1 {
				err = fmt.Errorf("attempt %d of %d: %w", attempt, opts.Attempts, err)
			}
			return "", written{}, err
		}
		if err := pause.For(ctx, backoff); err != nil {
			return "", written{}, err
		}
		backoff *= 2
	}
}

// retryable tells failures worth another attempt (broken DataNode pipelines,
// timeouts, connection resets, a NameNode failing over) from those that
// would fail the same way again.
func retryable(ctx context.Context, err error) bool {
	var le *localReadError
	switch {
	case ctx.Err() != nil:
		return false
	case errors.As(err, &le):
		return false // our own disk: not a DataNode problem
	case errors.Is(err, os.ErrPermission), errors.Is(err, os.ErrExist), errors.Is(err, os.ErrNotExist):
		return false
	case strings.Contains(err.Error(), "QuotaExceededException"):
		return false
	}
	return true
}

// localReadError marks a failure to read the local source.
type localReadError struct{ err error }

func (e *localReadError) Error() string { return "reading local file: " + e.err.Error() }
func (e *localReadError) Unwrap() error { return e.err }

type localReader struct{ r io.Reader }

func (l localReader) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	if err != nil && err != io.EOF {
		err = &localReadError{err}
	}
	return n, err
}
