package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
)

// Training progress: the program writes step/total or a fraction to the
// file named by contract.EnvProgressFile; the launcher reads it every
// progressInterval and sends the AM what changed (contract/progress.go).
const (
	progressInterval = time.Second
	// progressSendTimeout bounds one report: progress is best effort.
	progressSendTimeout = 5 * time.Second
	// progressFinalTimeout bounds the report after the program exited,
	// which delays the launcher's exit report.
	progressFinalTimeout = 2 * time.Second
)

// progressFilePath is where the program writes its progress: absolute, in
// the working directory, and absent (a stale one, from a task restarted
// in the same directory under --local, is removed).
func progressFilePath(cfg *Config) (string, error) {
	return freshTaskFile(cfg.Dir, contract.ProgressFileName(string(cfg.Task.Type), cfg.Task.Index), "progress file")
}

// readProgressFile reads at most MaxProgressFileSize+1 bytes of the
// progress file. Missing is os.ErrNotExist.
func readProgressFile(path string) ([]byte, error) {
	return readSmallFile(path, contract.MaxProgressFileSize+1)
}

// readSmallFile reads at most limit bytes of a regular file the program
// wrote (a FIFO or device there must not block the launcher: opened
// non-blocking, refused). Missing is os.ErrNotExist.
func readSmallFile(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is no regular file", path)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

// progressWatcher turns successive reads of the file into reports.
type progressWatcher struct {
	sent    *contract.Progress // last value the AM took
	bad     []byte             // last unparsable content, seen once
	told    bool               // bad content was logged since the last good read
	sendErr bool               // a failed report was logged
}

// observe takes one read of the file and returns the progress to send,
// if any, and a line to log, if any. A program that rewrites the file in
// place may be read mid-write: an empty file is no progress yet, and
// unparsable content is ignored quietly the first time; seen twice in a
// row it is the program's mistake, logged once until a good read.
func (w *progressWatcher) observe(content []byte, readErr error) (send *contract.Progress, logLine string) {
	if readErr != nil {
		if errors.Is(readErr, os.ErrNotExist) {
			return nil, ""
		}
		content = []byte(readErr.Error())
	}
	var p contract.Progress
	err := readErr
	if err == nil {
		p, err = contract.ParseProgress(content)
	}
	switch {
	case errors.Is(err, contract.ErrNoProgress):
		return nil, ""
	case err != nil:
		again := w.bad != nil && bytes.Equal(w.bad, content)
		w.bad = append(w.bad[:0], content...)
		if again && !w.told {
			w.told = true
			return nil, fmt.Sprintf("ignoring the progress file: %v", err)
		}
		return nil, ""
	}
	w.bad, w.told = nil, false
	if w.sent != nil && *w.sent == p {
		return nil, ""
	}
	return &p, ""
}

// progressReporter reads the progress file and sends each new value.
type progressReporter struct {
	path string
	send func(context.Context, contract.Progress) error
	log  *logger
	w    progressWatcher
	off  bool // the AM takes no progress
	done chan struct{}
}

func newProgressReporter(path string, send func(context.Context, contract.Progress) error, log *logger) *progressReporter {
	return &progressReporter{path: path, send: send, log: log, done: make(chan struct{})}
}

// run reads the file every interval until ctx ends.
func (r *progressReporter) run(ctx context.Context, interval time.Duration) {
	defer close(r.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for !r.off {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.once(ctx, progressSendTimeout)
	}
}

// final waits for run to end, then reads the file once more: the value a
// program wrote just before exiting reaches the AM too.
func (r *progressReporter) final(ctx context.Context) {
	<-r.done
	if !r.off {
		r.once(ctx, progressFinalTimeout)
	}
}

func (r *progressReporter) once(ctx context.Context, timeout time.Duration) {
	p, line := r.w.observe(readProgressFile(r.path))
	if line != "" {
		r.log.printf("%s", line)
	}
	if p == nil {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	err := r.send(sctx, *p)
	cancel()
	switch {
	case err == nil:
		r.w.sent = p
	case errors.Is(err, rendezvous.ErrNotServed):
		r.off = true
		r.log.printf("progress is not reported: this AM takes none (run --local)")
	case ctx.Err() == nil && !r.w.sendErr:
		r.w.sendErr = true // the AM may be busy: say it once, retry next read
		r.log.printf("could not report progress to the AM: %v", err)
	}
}
