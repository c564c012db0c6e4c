package xgboost

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Tracker is a tracker of XGBoost's collective (xgboost.collective's Rabit
// communicator, XGBoost 2.1 and later): each worker connects, says which
// task it is and on which port it listens for its peers, and once every
// worker of the round has, each is told its successor in the ring. The
// workers then connect to each other and train; each connects again to
// report its shutdown, or an error, or to print a line.
//
// Any process that reaches the port may connect, so what one can make it
// hold is bounded: a message is at most maxMessage bytes and must arrive
// within handshakeWait, at most maxConns connections are open at once, and a
// round holds at most Workers workers.
type Tracker struct {
	// Workers is the size of the collective.
	Workers int
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
	conn   net.Conn
	host   string
	port   int
	taskID string
}

// round is the tracker's state: the workers gathered so far, and how many
// of the running collective's have shut down.
type round struct {
	mu        sync.Mutex
	pending   []peer
	running   bool
	shutdowns int
}

// Serve answers workers on ln until ctx ends.
func (t Tracker) Serve(ctx context.Context, ln net.Listener, logf func(format string, args ...any)) error {
	if t.Workers < 1 {
		return fmt.Errorf("xgboost tracker: %d workers; a collective needs at least 1", t.Workers)
	}
	context.AfterFunc(ctx, func() { _ = ln.Close() })
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
			if err := t.answer(conn, r, logf); err != nil {
				logf("xgboost tracker: %s: %v", conn.RemoteAddr(), err)
			}
		}()
	}
}

// answer reads one worker's request on conn and answers it. A start keeps
// the connection open until the round is complete.
func (t Tracker) answer(conn net.Conn, r *round, logf func(string, ...any)) error {
	keep := false
	defer func() {
		if !keep {
			conn.Close()
		}
	}()
	_ = conn.SetDeadline(time.Now().Add(handshakeWait))
	var hello struct {
		WorldSize *int   `json:"world_size"`
		Rank      *int   `json:"rank"`
		TaskID    string `json:"task_id"`
	}
	var cmd struct {
		Cmd       int    `json:"cmd"`
		Port      int    `json:"port"`
		ErrorPort int    `json:"error_port"`
		Msg       string `json:"msg"`
		Code      int    `json:"code"`
	}
	if err := verifyMagic(conn); err != nil {
		return err
	}
	if err := readJSON(conn, &hello); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	if err := readJSON(conn, &cmd); err != nil {
		return fmt.Errorf("command: %w", err)
	}
	who := hello.TaskID
	if who == "" {
		who = conn.RemoteAddr().String()
	}
	switch cmd.Cmd {
	case cmdStart:
		if cmd.Port <= 0 || cmd.Port > 65535 {
			return fmt.Errorf("start from %s: invalid port %d", who, cmd.Port)
		}
		if err := writeJSON(conn, map[string]int{"world_size": t.Workers}); err != nil {
			return fmt.Errorf("start from %s: %w", who, err)
		}
		_ = conn.SetDeadline(time.Time{})
		keep = true
		t.join(r, peer{conn: conn, host: hostOf(conn), port: cmd.Port, taskID: hello.TaskID}, logf)
	case cmdShutdown:
		r.shutdown(t.Workers)
	case cmdError:
		logf("xgboost tracker: %s reports an error (code %d): %s", who, cmd.Code, clip(cmd.Msg))
	case cmdPrint:
		logf("xgboost: %s", clip(cmd.Msg))
	default:
		return fmt.Errorf("unknown command %d from %s", cmd.Cmd, who)
	}
	return nil
}

// join adds p to the round; the last worker of the round completes it: each
// worker is told its successor in the ring, in rank order.
func (t Tracker) join(r *round, p peer, logf func(string, ...any)) {
	r.mu.Lock()
	if r.running {
		// A worker starting while a collective runs: the cluster restarted
		// (or a worker was replaced); a new round begins.
		r.running, r.shutdowns = false, 0
	}
	r.pending = append(r.pending, p)
	if len(r.pending) < t.Workers {
		r.mu.Unlock()
		return
	}
	ring := r.pending
	r.pending, r.running = nil, true
	r.mu.Unlock()

	sortRing(ring)
	names := make([]string, len(ring))
	var wg sync.WaitGroup
	for rank, w := range ring {
		names[rank] = fmt.Sprintf("%d=%s", rank, w.taskID)
		next := (rank + 1) % len(ring)
		info := map[string]any{"rank": next, "host": ring[next].host, "port": ring[next].port}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.conn.Close()
			_ = w.conn.SetDeadline(time.Now().Add(handshakeWait))
			if err := writeJSON(w.conn, info); err != nil {
				logf("xgboost tracker: telling %s its peer: %v", w.taskID, err)
			}
		}()
	}
	wg.Wait()
	logf("xgboost tracker: the collective of %d workers started (ranks %s)", len(ring), strings.Join(names, ", "))
}

// shutdown counts a worker's shutdown; when every worker of the running
// collective has, the tracker waits for a new round.
func (r *round) shutdown(workers int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.running {
		return
	}
	if r.shutdowns++; r.shutdowns >= workers {
		r.running, r.shutdowns = false, 0
	}
}

// sortRing orders the workers by rank: a worker whose task is worker:N
// gets rank N when every one's is such and they differ, so that ranks are
// the workers' indexes; otherwise by host and task, as XGBoost's own
// tracker does.
func sortRing(ring []peer) {
	index := map[string]int{}
	for _, p := range ring {
		n, err := strconv.Atoi(strings.TrimPrefix(p.taskID, "worker:"))
		if err != nil || !strings.HasPrefix(p.taskID, "worker:") {
			break
		}
		index[p.taskID] = n
	}
	if len(index) == len(ring) {
		sort.Slice(ring, func(i, j int) bool { return index[ring[i].taskID] < index[ring[j].taskID] })
		return
	}
	sort.Slice(ring, func(i, j int) bool {
		if ring[i].host != ring[j].host {
			return ring[i].host < ring[j].host
		}
		return ring[i].taskID < ring[j].taskID
	})
}

// hostOf is the address the worker connected from, which its peers reach.
func hostOf(conn net.Conn) string {
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
	return host
}

// verifyMagic exchanges the protocol's magic number: each side sends it,
// then reads the other's.
func verifyMagic(conn io.ReadWriter) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], magic)
	if _, err := conn.Write(b[:]); err != nil {
		return fmt.Errorf("magic: %w", err)
	}
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		return fmt.Errorf("magic: %w", err)
	}
	if got := binary.LittleEndian.Uint32(b[:]); got != magic {
		return fmt.Errorf("not an XGBoost worker (magic %#x)", got)
	}
	return nil
}

// readJSON reads one message of JSON into v.
func readJSON(r io.Reader, v any) error {
	buf, err := readMessage(r)
	if err != nil {
		return err
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
