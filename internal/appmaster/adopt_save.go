package appmaster

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"path"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// maxAdoptFile bounds the saved table read back (a task's line is ~120
// bytes; taskspec allows at most a few thousand tasks).
const maxAdoptFile = 4 << 20

// adoptPath is the saved task table of the job's staging directory.
func (s *amSecurity) adoptPath() string {
	return path.Join(hdfs.StagingDir(s.jf.User, s.jf.AppID), AdoptFileName)
}

// savedState is what an attempt leaves the next (AdoptFileName): its
// rendezvous address, where the launchers of the tasks it runs look for it
// after losing the previous attempt (contract.SavedAM; they call it with the
// secret every attempt shares), and the task table.
type savedState struct {
	AM    string        `json:"am"` // host:port
	Tasks []AdoptedTask `json:"tasks"`
	// Restarts is the job's restarts so far (core.RestartRecord): the next
	// attempt goes on counting from there.
	Restarts *savedRestarts `json:"restarts,omitempty"`
}

// savedRestarts is core.RestartRecord as saved.
type savedRestarts struct {
	Counted   int      `json:"counted"`
	Uncounted int      `json:"uncounted"`
	Cluster   int      `json:"cluster"`
	Causes    []string `json:"causes,omitempty"`
}

// maxSavedCauses bounds the causes taken over from a saved file.
const maxSavedCauses = 1000

// record is what a next attempt resumes; nil when nothing was saved.
func (st *savedState) record() *core.RestartRecord {
	if st == nil || st.Restarts == nil {
		return nil
	}
	r := st.Restarts
	causes := r.Causes
	if len(causes) > maxSavedCauses {
		causes = causes[len(causes)-maxSavedCauses:]
	}
	return &core.RestartRecord{Counted: r.Counted, Uncounted: r.Uncounted, Cluster: r.Cluster, Causes: causes}
}

// taskSaver keeps the saved task table (AdoptFileName) up to date for the
// next attempt: observe is called with every snapshot and must not block,
// so the writes happen on one goroutine of their own, latest table first.
type taskSaver struct {
	am     string
	tables chan savedState
	last   savedState
}

func newTaskSaver(ctx context.Context, s *amSecurity, am string, logf func(string, ...any)) *taskSaver {
	ts := &taskSaver{am: am, tables: make(chan savedState, 1)}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case st := <-ts.tables:
				if err := s.saveState(ctx, st); err != nil {
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
	if !ok {
		// Nothing adoptable: a table saved earlier no longer holds (a
		// restart or the job's end stops its tasks), and goes.
		table = nil
	}
	r := snap.Record
	st := savedState{AM: ts.am, Tasks: table, Restarts: &savedRestarts{Counted: r.Counted, Uncounted: r.Uncounted, Cluster: r.Cluster, Causes: r.Causes}}
	if reflect.DeepEqual(st, ts.last) || (ts.last.Restarts == nil && table == nil && r.Counted+r.Uncounted+r.Cluster == 0) {
		return // unchanged, or nothing to say yet
	}
	ts.last = st
	select {
	case <-ts.tables: // superseded
	default:
	}
	ts.tables <- st
}

func (s *amSecurity) saveState(ctx context.Context, st savedState) error {
	data, err := json.Marshal(st)
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

// savedState reads what a previous attempt saved; nil when there is none or
// it cannot be read (logged): nothing is adopted then.
func (s *amSecurity) savedState(ctx context.Context, logf func(string, ...any)) *savedState {
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
	var st *savedState
	if f.Size() > maxAdoptFile {
		err = errors.New("larger than 4 MiB")
	} else {
		data := make([]byte, f.Size())
		if _, err = f.ReadAt(data, 0); err == nil || errors.Is(err, io.EOF) {
			st, err = decodeSavedState(data)
		}
	}
	if err != nil {
		logf("reading the previous attempt's task table %s: %v", s.adoptPath(), err)
		return nil
	}
	return st
}

// decodeSavedState parses what an attempt saved, bounded like the file.
func decodeSavedState(data []byte) (*savedState, error) {
	if len(data) > maxAdoptFile {
		return nil, errors.New("larger than 4 MiB")
	}
	var st savedState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// attemptOf is the AM attempt a container belongs to, from its id
// (container_[e<epoch>_]<cluster ts>_<app>_<attempt>_<n>); 0 if unreadable.
func attemptOf(containerID string) int {
	f := strings.Split(containerID, "_")
	if len(f) < 5 {
		return 0
	}
	n, err := strconv.Atoi(f[len(f)-2])
	if err != nil {
		return 0
	}
	return n
}

// reuseListen is the address a new attempt's rendezvous binds: the previous
// attempt's port when that attempt ran on this host, so the adopted tasks'
// launchers reach the new attempt where they reached the old; "" otherwise.
func reuseListen(st *savedState, host string) string {
	if st == nil || host == "" {
		return ""
	}
	h, port, err := net.SplitHostPort(st.AM)
	if err != nil || h != host {
		return ""
	}
	return ":" + port
}
