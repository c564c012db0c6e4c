package appmaster

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path"
	"reflect"
	"time"

	"github.com/tfyarn/tfyarn/hdfs"
)

// maxAdoptFile bounds the saved table read back (a task's line is ~120
// bytes; taskspec allows at most a few thousand tasks).
const maxAdoptFile = 4 << 20

// adoptPath is the saved task table of the job's staging directory.
func (s *amSecurity) adoptPath() string {
	return path.Join(hdfs.StagingDir(s.jf.User, s.jf.AppID), AdoptFileName)
}

// taskSaver keeps the saved task table (AdoptFileName) up to date for the
// next attempt: observe is called with every snapshot and must not block,
// so the writes happen on one goroutine of their own, latest table first.
type taskSaver struct {
	tables chan []AdoptedTask
	last   []AdoptedTask
}

func newTaskSaver(ctx context.Context, s *amSecurity, logf func(string, ...any)) *taskSaver {
	ts := &taskSaver{tables: make(chan []AdoptedTask, 1)}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case table := <-ts.tables:
				if err := s.saveTasks(ctx, table); err != nil {
					logf("saving the task table for a next attempt: %v", err)
				}
			}
		}
	}()
	return ts
}

func (ts *taskSaver) observe(snap Snapshot) {
	if snap.Finish != nil {
		return
	}
	table, ok := runningTable(snap.Tasks)
	if !ok || reflect.DeepEqual(table, ts.last) {
		return
	}
	ts.last = table
	select {
	case <-ts.tables: // superseded
	default:
	}
	ts.tables <- table
}

func (s *amSecurity) saveTasks(ctx context.Context, table []AdoptedTask) error {
	data, err := json.Marshal(table)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	fs, err := hdfs.ConnectOptions(ctx, s.conf, s.hdfsOptions())
	if err != nil {
		return err
	}
	defer fs.Close()
	p := s.adoptPath()
	// Not atomic: an attempt dying in between leaves no table, and the
	// next one starts afresh.
	if err := fs.RemoveAll(ctx, p); err != nil {
		return err
	}
	_, err = fs.UploadBytes(ctx, data, p)
	return err
}

// savedTasks reads the table a previous attempt saved; nil when there is
// none or it cannot be read (logged): nothing is adopted then.
func (s *amSecurity) savedTasks(ctx context.Context, logf func(string, ...any)) []AdoptedTask {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	fs, err := hdfs.ConnectOptions(ctx, s.conf, s.hdfsOptions())
	if err != nil {
		logf("reading the previous attempt's task table: %v", err)
		return nil
	}
	defer fs.Close()
	f, err := fs.Open(ctx, s.adoptPath())
	if err != nil {
		logf("reading the previous attempt's task table: %v", err)
		return nil
	}
	defer f.Close()
	var table []AdoptedTask
	if f.Size() > maxAdoptFile {
		err = errors.New("larger than 4 MiB")
	} else {
		data := make([]byte, f.Size())
		if _, err = f.ReadAt(data, 0); err == nil || errors.Is(err, io.EOF) {
			table, err = decodeTaskTable(data)
		}
	}
	if err != nil {
		logf("reading the previous attempt's task table %s: %v", s.adoptPath(), err)
		return nil
	}
	return table
}

// decodeTaskTable parses a saved task table, bounded like the file.
func decodeTaskTable(data []byte) ([]AdoptedTask, error) {
	if len(data) > maxAdoptFile {
		return nil, errors.New("larger than 4 MiB")
	}
	var table []AdoptedTask
	if err := json.Unmarshal(data, &table); err != nil {
		return nil, err
	}
	return table, nil
}
