package xgboost

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/refusals"
	"github.com/tfyarn/tfyarn/internal/reqsign"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Tracker is a tracker of XGBoost's collective (xgboost.collective's Rabit
// communicator, XGBoost 2.1 and later): each worker connects, says which
// task it is and on which port it listens for its peers, and once every
// worker of the round has, each is told its successor in the ring. The
// workers then connect to each other and train; each connects again to
// report its shutdown, or an error, or to print a line.
//
// Any process that reaches the port may connect, so the tracker hears only
// the job's workers: every connection's hello must carry, as its task_id,
// a worker's "worker:N:TOKEN" with its token under Key
// (framework.JobServiceToken), and, once in the collective, claim no other
// rank than N nor another size of it. Anything else is closed at once, unanswered, and
// counted (package refusals: the first few logged, then a count a minute,
// never a task_id). XGBoost's client cannot be changed, and its hello's
// task_id is the one field that can carry a proof. What a stranger can
// make it hold is bounded: a message is at most maxMessage bytes and must
// arrive within handshakeWait, at most maxConns connections are open at
// once, and a round holds one start per worker.
type Tracker struct {
	// Workers is the size of the collective.
	Workers int
	// Key is the job service's key (framework.Framework.JobService).
	Key []byte
}

// The protocol's constants (XGBoost's src/collective/protocol.h).
const (
	magic       = 0xff99
	cmdStart    = 1
	cmdShutdown = 2
	cmdError    = 3
	cmdPrint    = 4
)

// Bounds on what a client can make the tracker hold.
const (
	maxMessage = 64 << 10
	maxLogLine = 1000
)

// How many connections at once, and how long a request may take (tests
// shorten them).
var (
	maxConns      = 1024
	handshakeWait = 60 * time.Second
)

// peer is a worker of the round being gathered.
type peer struct {
	conn  net.Conn
	host  string
	port  int
	index int // worker:index, whose rank it gets
}

// round is the tracker's state: the workers gathered so far, and which of
// the running collective's have shut down.
type round struct {
	mu        sync.Mutex
	pending   []peer
	running   bool
	shutdowns map[int]bool
}

// Serve answers the job's workers on ln until ctx ends.
func (t Tracker) Serve(ctx context.Context, ln net.Listener, logf func(format string, args ...any)) error {
	if t.Workers < 1 {
		return fmt.Errorf("xgboost tracker: %d workers; a collective needs at least 1", t.Workers)
	}
	if len(t.Key) < reqsign.MinKeySize {
		return fmt.Errorf("xgboost tracker: a key of %d bytes; it needs one of at least %d to tell the job's workers from strangers", len(t.Key), reqsign.MinKeySize)
	}
	context.AfterFunc(ctx, func() { _ = ln.Close() })
	refused := refusals.New("xgboost tracker", logf)
	defer refused.Close()
	r := &round{}
	slots := make(chan struct{}, maxConns)
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("xgboost tracker: %w", err)
		}
		select {
		case slots <- struct{}{}:
		default:
			conn.Close() // too many at once: the worker retries
			continue
		}
		go func() {
			defer func() { <-slots }()
			t.answer(conn, r, refused, logf)
		}()
	}
}

// hello is what a worker says first on every connection.
type hello struct {
	WorldSize *int   `json:"world_size"`
	Rank      *int   `json:"rank"`
	TaskID    string `json:"task_id"`
}

// command is what it asks once heard.
type command struct {
	Cmd       int    `json:"cmd"`
	Port      int    `json:"port"`
	ErrorPort int    `json:"error_port"`
	Msg       string `json:"msg"`
	Code      int    `json:"code"`
}

// answer hears one connection: a worker of the job is answered, anything
// else closed unanswered and counted. A start keeps the connection open
// until the round is complete.
func (t Tracker) answer(conn net.Conn, r *round, refused *refusals.Log, logf func(string, ...any)) {
	_ = conn.SetDeadline(time.Now().Add(handshakeWait))
	index, err := t.authenticate(conn)
	if err != nil {
		// Counted before the close: whoever sees it closed finds it counted.
		refused.Refuse(refusals.Refusal{Peer: conn.RemoteAddr().String(), Reason: err.Error()})
		conn.Close()
		return
	}
	keep, err := t.serve(conn, r, index, logf)
	if err != nil {
		logf("xgboost tracker: %s: %v", workerName(index), err)
	}
	if !keep {
		conn.Close()
	}
}

// serve reads worker index's command and does it. keep: the connection
// stays open (a start, until the round is complete).
func (t Tracker) serve(conn net.Conn, r *round, index int, logf func(string, ...any)) (keep bool, err error) {
	var cmd command
	if err := readJSON(conn, &cmd); err != nil {
		return false, fmt.Errorf("command: %w", err)
	}
	switch cmd.Cmd {
	case cmdStart:
		return t.start(conn, r, index, cmd.Port, logf)
	case cmdShutdown:
		r.shutdown(t.Workers, index)
	case cmdError:
		logf("xgboost tracker: %s reports an error (code %d): %s", workerName(index), cmd.Code, clip(cmd.Msg))
	case cmdPrint:
		logf("xgboost: %s", clip(cmd.Msg))
	default:
		return false, fmt.Errorf("unknown command %d", cmd.Cmd)
	}
	return false, nil
}

// authenticate exchanges the magic number and reads the hello, and
// returns the index of the worker it proves. Its errors name what was
// wrong, never what was sent as a task_id.
func (t Tracker) authenticate(conn net.Conn) (int, error) {
	if err := verifyMagic(conn); err != nil {
		return 0, err
	}
	var h hello
	if err := readJSON(conn, &h); err != nil {
		return 0, fmt.Errorf("hello: %w", err)
	}
	index, err := t.workerOf(h.TaskID)
	if err != nil {
		return 0, err
	}
	// Until the tracker made it one of the collective (world_size -1),
	// XGBoost's hello says rank 0 whoever sends it; from then on, its rank
	// and the collective's size.
	if h.WorldSize == nil || *h.WorldSize == -1 {
		return index, nil
	}
	if *h.WorldSize != t.Workers {
		return 0, fmt.Errorf("a collective of %d claimed by %s (the job has %d workers)", *h.WorldSize, workerName(index), t.Workers)
	}
	if h.Rank != nil && *h.Rank != index {
		return 0, fmt.Errorf("rank %d claimed by %s", *h.Rank, workerName(index))
	}
	return index, nil
}

// workerOf is the index of the worker whose task_id, "worker:N:TOKEN",
// this is.
func (t Tracker) workerOf(taskID string) (int, error) {
	rest, ok := strings.CutPrefix(taskID, "worker:")
	digits, token, found := strings.Cut(rest, ":")
	if !ok || !found {
		return 0, errors.New("a task_id not of the job's form")
	}
	index, err := strconv.Atoi(digits)
	if err != nil || strconv.Itoa(index) != digits || index < 0 || index >= t.Workers {
		return 0, fmt.Errorf("a task_id naming no worker of the job's %d", t.Workers)
	}
	if !framework.CheckJobServiceToken(t.Key, taskspec.TaskID{Type: taskspec.Worker, Index: index}, token) {
		return 0, errors.New("a task_id whose token does not verify")
	}
	return index, nil
}

// start answers worker index's start: the size of the collective now, its
// successor once the round is complete. keep: the connection stays open
// for the round.
func (t Tracker) start(conn net.Conn, r *round, index, port int, logf func(string, ...any)) (keep bool, err error) {
	if port <= 0 || port > 65535 {
		return false, fmt.Errorf("start: invalid port %d", port)
	}
	if err := writeJSON(conn, map[string]int{"world_size": t.Workers}); err != nil {
		return false, fmt.Errorf("start: %w", err)
	}
	_ = conn.SetDeadline(time.Time{})
	t.join(r, peer{conn: conn, host: hostOf(conn), port: port, index: index}, logf)
	return true, nil
}

// join adds p to the round; the last worker of the round completes it: each
// worker is told its successor in the ring, in rank order.
func (t Tracker) join(r *round, p peer, logf func(string, ...any)) {
	r.mu.Lock()
	if r.running {
		// A worker starting while a collective runs: the cluster restarted
		// (or a worker was replaced); a new round begins.
		r.running, r.shutdowns = false, nil
	}
	for i, q := range r.pending {
		if q.index == p.index {
			// The same worker again: its earlier start is a process the
			// cluster's restart ended.
			logf("xgboost tracker: %s started again; its earlier start is dropped", workerName(p.index))
			q.conn.Close()
			r.pending = append(r.pending[:i], r.pending[i+1:]...)
			break
		}
	}
	r.pending = append(r.pending, p)
	if len(r.pending) < t.Workers {
		r.mu.Unlock()
		return
	}
	ring := r.pending
	r.pending, r.running = nil, true
	r.mu.Unlock()

	// One start per index, every index below Workers: rank N is worker:N.
	sort.Slice(ring, func(i, j int) bool { return ring[i].index < ring[j].index })
	names := make([]string, len(ring))
	var wg sync.WaitGroup
	for rank, w := range ring {
		names[rank] = fmt.Sprintf("%d=%s", rank, workerName(w.index))
		next := (rank + 1) % len(ring)
		info := map[string]any{"rank": next, "host": ring[next].host, "port": ring[next].port}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.conn.Close()
			_ = w.conn.SetDeadline(time.Now().Add(handshakeWait))
			if err := writeJSON(w.conn, info); err != nil {
				logf("xgboost tracker: telling %s its peer: %v", workerName(w.index), err)
			}
		}()
	}
	wg.Wait()
	logf("xgboost tracker: the collective of %d workers started (ranks %s)", len(ring), strings.Join(names, ", "))
}

// shutdown counts worker index's shutdown; when every worker of the
// running collective has, the tracker waits for a new round.
func (r *round) shutdown(workers, index int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.running {
		return
	}
	if r.shutdowns == nil {
		r.shutdowns = map[int]bool{}
	}
	if r.shutdowns[index] = true; len(r.shutdowns) >= workers {
		r.running, r.shutdowns = false, nil
	}
}

// workerName is worker index's task, as logs name it (never its task_id,
// which holds its token).
func workerName(index int) string {
	return taskspec.TaskID{Type: taskspec.Worker, Index: index}.String()
}

// hostOf is the address the worker connected from, which its peers reach.
func hostOf(conn net.Conn) string {
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
	return host
}

// verifyMagic exchanges the protocol's magic number. The worker sends
// its own first, without waiting for the tracker's, so the tracker reads
// first: a client that does not send it learns nothing, not even that an
// XGBoost tracker listens.
func verifyMagic(conn io.ReadWriter) error {
	var b [4]byte
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		return fmt.Errorf("magic: %w", quiet(err))
	}
	if got := binary.LittleEndian.Uint32(b[:]); got != magic {
		return fmt.Errorf("not an XGBoost worker (magic %#x)", got)
	}
	binary.LittleEndian.PutUint32(b[:], magic)
	if _, err := conn.Write(b[:]); err != nil {
		return fmt.Errorf("magic: %w", quiet(err))
	}
	return nil
}

// quiet is err as a refusal's reason: a timeout says what it waited for,
// without the addresses the net package adds.
func quiet(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("nothing within %s (i/o timeout)", handshakeWait)
	}
	return err
}

// readJSON reads one message of JSON into v.
func readJSON(r io.Reader, v any) error {
	buf, err := readMessage(r)
	if err != nil {
		return quiet(err)
	}
	if err := json.Unmarshal(buf, v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return nil
}

// readMessage reads one message: a 32-bit length (the worker's byte
// order: XGBoost sends its int32 as is, little-endian on every platform
// it ships wheels for), then that many bytes, at most maxMessage.
func readMessage(r io.Reader) ([]byte, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return nil, err
	}
	n := int32(binary.LittleEndian.Uint32(b[:]))
	if n < 0 || n > maxMessage {
		return nil, fmt.Errorf("message of %d bytes (at most %d)", n, maxMessage)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// writeJSON writes v as one message.
func writeJSON(conn io.Writer, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	msg := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	_, err = conn.Write(append(msg, body...))
	return err
}

// clip bounds a worker's line in the log.
func clip(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > maxLogLine {
		return s[:maxLogLine] + "..."
	}
	return s
}
