package appmaster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/taskspec"
)

// SaveResultFunc keeps a task's whole result, read from f (from its start), where `tfyarn result`
// finds it (hdfs.FS.WriteResult).
type SaveResultFunc func(ctx context.Context, task taskspec.TaskID, f *os.File) error

// resultEntry is what the status report says of a task's result.
type resultEntry struct {
	bytes    *int64
	notSaved string
}

// resultSpool takes the chunks of the tasks' results (rendezvous.ResultHandler): each task's
// chunks go, in order, into a file of the AM's working directory, and the whole file to save once
// the last came. One result is saved at a time: the AM holds a chunk in memory, never a result.
type resultSpool struct {
	dir  string // the spool's directory, made on first use
	save SaveResultFunc
	page *statusPage
	logf func(format string, args ...any)

	mu    sync.Mutex
	parts map[taskspec.TaskID]*spooled
}

// spooled is a result being received.
type spooled struct {
	container string
	f         *os.File
	size      int64
}

func (s *resultSpool) receive(ctx context.Context, ch rendezvous.ResultChunk) error {
	if !s.page.knows(ch.Task) {
		return fmt.Errorf("%w: %s", rendezvous.ErrUnknownTask, ch.Task)
	}
	if ch.TooLarge > 0 {
		s.page.setResult(ch.Task, resultEntry{notSaved: fmt.Sprintf("%s's result file is %d bytes, over the limit of %d (64 MiB): not saved", ch.Task, ch.TooLarge, contract.MaxResultBytes)})
		s.logf("%s's result file is %d bytes, over the limit of %d: not saved", ch.Task, ch.TooLarge, contract.MaxResultBytes)
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sp, err := s.part(ch)
	if err != nil || sp == nil {
		return err
	}
	if _, err := sp.f.Write(ch.Data); err != nil {
		return s.drop(ch.Task, fmt.Errorf("spooling the result of %s: %w", ch.Task, err))
	}
	sp.size += int64(len(ch.Data))
	if !ch.Last {
		return nil
	}
	defer s.drop(ch.Task, nil)
	_, err = sp.f.Seek(0, io.SeekStart)
	if err == nil {
		err = s.save(ctx, ch.Task, sp.f)
	}
	if err != nil {
		line := fmt.Sprintf("%s's result (%d bytes) was not saved: %v", ch.Task, sp.size, err)
		s.page.setResult(ch.Task, resultEntry{notSaved: line})
		s.logf("%s", line)
		return nil // the launcher cannot do better by sending it again
	}
	size := sp.size
	s.page.setResult(ch.Task, resultEntry{bytes: &size})
	s.logf("saved %s's result (%d bytes)", ch.Task, size)
	return nil
}

// part is the spool file the chunk goes on: a new one at offset 0, else the task's own at the
// chunk's offset; nil (no error) for a chunk received already (a retried request).
func (s *resultSpool) part(ch rendezvous.ResultChunk) (*spooled, error) {
	sp := s.parts[ch.Task]
	if ch.Offset == 0 && (sp == nil || sp.size > 0 || sp.container != ch.ContainerID) {
		_ = s.drop(ch.Task, nil)
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return nil, fmt.Errorf("spooling the result of %s: %w", ch.Task, err)
		}
		f, err := os.CreateTemp(s.dir, "result-*")
		if err != nil {
			return nil, fmt.Errorf("spooling the result of %s: %w", ch.Task, err)
		}
		sp = &spooled{container: ch.ContainerID, f: f}
		s.parts[ch.Task] = sp
		return sp, nil
	}
	switch {
	case sp == nil || sp.container != ch.ContainerID:
		return nil, fmt.Errorf("%w: a chunk of %s's result at %d without its start", rendezvous.ErrBadRequest, ch.Task, ch.Offset)
	case ch.Offset == sp.size:
		return sp, nil
	case ch.Offset+int64(len(ch.Data)) <= sp.size:
		return nil, nil
	}
	return nil, fmt.Errorf("%w: a chunk of %s's result at %d, %d bytes received", rendezvous.ErrBadRequest, ch.Task, ch.Offset, sp.size)
}

// drop forgets the task's spool file, if any, and returns err.
func (s *resultSpool) drop(task taskspec.TaskID, err error) error {
	if sp := s.parts[task]; sp != nil {
		sp.f.Close()
		os.Remove(sp.f.Name())
		delete(s.parts, task)
	}
	return err
}

// close removes what is left of results never finished.
func (s *resultSpool) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := range s.parts {
		_ = s.drop(t, nil)
	}
}

// SaveResult implements rendezvous.ResultHandler.
func (b *metricsBoard) SaveResult(ctx context.Context, ch rendezvous.ResultChunk) error {
	if b.results == nil {
		return errors.New("this AM keeps no results")
	}
	return b.results.receive(ctx, ch)
}

func (p *statusPage) setResult(task taskspec.TaskID, e resultEntry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.results[task] = e
	p.stale = true
}

func newResultSpool(dir string, save SaveResultFunc, page *statusPage, logf func(string, ...any)) *resultSpool {
	return &resultSpool{dir: filepath.Clean(dir), save: save, page: page, logf: logf, parts: map[taskspec.TaskID]*spooled{}}
}
