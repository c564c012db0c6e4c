package amattempt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// FileName is the saved state's name in the job's staging directory.
const FileName = "am-tasks.json"

// Path is where the AM attempts of a job save their state for the next,
// in its staging directory.
func Path(stagingDir string) string { return path.Join(stagingDir, FileName) }

// maxFile bounds the saved state read back (a task's line is ~140 bytes;
// taskspec allows at most a few thousand tasks).
const maxFile = 4 << 20

// maxSavedCauses bounds the restart causes taken over from a saved file.
const maxSavedCauses = 1000

// Task is one running task as an attempt saved it for the next.
type Task struct {
	Task        string `json:"task"` // worker:1
	ContainerID string `json:"container"`
	Host        string `json:"host"`
	Port        int    `json:"port"`
	// Control is the port its launcher listens on for a later attempt's
	// call (Announce); 0 when the launcher announced none.
	Control int `json:"control,omitempty"`
}

// State is what an attempt leaves the next (FileName): its rendezvous
// address, the table of the tasks it runs, and the job's restarts so far.
type State struct {
	AM    string `json:"am"` // host:port
	Tasks []Task `json:"tasks"`
	// Restarts: the next attempt goes on counting from there.
	Restarts *Restarts `json:"restarts,omitempty"`
}

// Restarts is the job's restart count as saved (the core's RestartRecord).
type Restarts struct {
	Counted   int      `json:"counted"`
	Uncounted int      `json:"uncounted"`
	Cluster   int      `json:"cluster"`
	Replaced  int      `json:"replaced,omitempty"` // an elastic job's lost workers replaced alone
	Causes    []string `json:"causes,omitempty"`
	// NodeFailures and Excluded are the job's failed task attempts per
	// host and the nodes it excluded (--max-node-failures, --exclude-nodes):
	// they hold per job too.
	NodeFailures map[string]int `json:"node_failures,omitempty"`
	Excluded     []ExcludedNode `json:"excluded,omitempty"`
}

// ExcludedNode is a node the job's containers stay off, and why.
type ExcludedNode struct {
	Host   string `json:"host"`
	Reason string `json:"reason"`
}

// Decode parses what an attempt saved, bounded like the file; the causes
// taken over are the latest maxSavedCauses.
func Decode(data []byte) (*State, error) {
	if len(data) > maxFile {
		return nil, errors.New("larger than 4 MiB")
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, err
	}
	if r := st.Restarts; r != nil && len(r.Causes) > maxSavedCauses {
		r.Causes = r.Causes[len(r.Causes)-maxSavedCauses:]
	}
	return &st, nil
}

// ReuseListen is the address a new attempt's rendezvous binds: the
// previous attempt's port when that attempt ran on this host, so the
// adopted tasks' launchers reach the new attempt where they reached the
// old even before it calls them; "" otherwise.
func (st *State) ReuseListen(host string) string {
	if st == nil || host == "" {
		return ""
	}
	h, port, err := net.SplitHostPort(st.AM)
	if err != nil || h != host {
		return ""
	}
	return ":" + port
}

// AttemptOf is the AM attempt a container belongs to, from its id
// (container_[e<epoch>_]<cluster ts>_<app>_<attempt>_<n>); 0 if unreadable.
func AttemptOf(containerID string) int {
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

// Store reads and writes the saved state where the AM keeps it. It does
// no I/O of its own: Read and Write are the AM's access to HDFS (with its
// keytab login or delegation tokens), so that a launcher, which imports this
// package for its control port, links no HDFS client and never reads the
// state.
type Store struct {
	Path string // Path(the job's staging directory)
	// Read returns the file's bytes, or an error when it is larger than
	// max bytes.
	Read func(ctx context.Context, path string, max int64) ([]byte, error)
	// Write replaces the file with data. It need not be atomic: an attempt
	// dying in between leaves no table, and the next one starts afresh.
	Write func(ctx context.Context, path string, data []byte) error
}

// storeTimeout bounds one read or write.
const storeTimeout = 30 * time.Second

// Save replaces the saved state with st.
func (s Store) Save(ctx context.Context, st State) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	return s.Write(ctx, s.Path, data)
}

// Load reads what a previous attempt saved.
func (s Store) Load(ctx context.Context) (*State, error) {
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	data, err := s.Read(ctx, s.Path, maxFile)
	if err != nil {
		return nil, err
	}
	st, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Path, err)
	}
	return st, nil
}

// Saver keeps the saved state up to date for the next attempt: Offer is
// called with every state and must not block, so the writes happen on one
// goroutine of their own, latest state first.
type Saver struct {
	states chan State
	last   State
}

// NewSaver starts the saver's goroutine, which ends with ctx; save is
// Store.Save, logf says why a save failed.
func NewSaver(ctx context.Context, save func(context.Context, State) error, logf func(string, ...any)) *Saver {
	s := &Saver{states: make(chan State, 1)}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case st := <-s.states:
				if err := save(ctx, st); err != nil {
					logf("saving the task table for a next attempt: %v", err)
				}
			}
		}
	}()
	return s
}

// Offer queues st for saving, replacing a state not saved yet. A state
// equal to the last one offered is not saved again, nor is an empty one
// before anything was said.
func (s *Saver) Offer(st State) {
	r := st.Restarts
	nothingYet := s.last.Restarts == nil && st.Tasks == nil && (r == nil || r.Counted+r.Uncounted+r.Cluster+r.Replaced == 0)
	if reflect.DeepEqual(st, s.last) || nothingYet {
		return
	}
	s.last = st
	select {
	case <-s.states: // superseded
	default:
	}
	s.states <- st
}
