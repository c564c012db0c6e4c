package xgboost

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serveTracker starts a tracker for n workers on loopback; its log lines
// go to the returned func.
func serveTracker(t *testing.T, n int) (addr string, logged func() string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var lines []string
	done := make(chan error, 1)
	go func() {
		done <- Tracker{Workers: n}.Serve(ctx, ln, func(f string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, fmt.Sprintf(f, a...))
		})
	}()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	return ln.Addr().String(), func() string { mu.Lock(); defer mu.Unlock(); return strings.Join(lines, "\n") }
}

// worker is a client speaking XGBoost's side of the protocol, as
// src/collective/comm.cc does.
type worker struct {
	t    *testing.T
	conn net.Conn
}

func dial(t *testing.T, addr, taskID string, cmd map[string]any) *worker {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	w := &worker{t, conn}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], magic)
	_, err = conn.Write(b[:])
	require.NoError(t, err)
	_, err = io.ReadFull(conn, b[:])
	require.NoError(t, err)
	require.Equal(t, uint32(magic), binary.LittleEndian.Uint32(b[:]))
	w.send(map[string]any{"world_size": -1, "rank": -1, "task_id": taskID})
	w.send(cmd)
	return w
}

func (w *worker) send(v any) {
	body, err := json.Marshal(v)
	require.NoError(w.t, err)
	_, err = w.conn.Write(append(binary.LittleEndian.AppendUint32(nil, uint32(len(body))), body...))
	require.NoError(w.t, err)
}

func (w *worker) recv() map[string]any {
	var b [4]byte
	_, err := io.ReadFull(w.conn, b[:])
	require.NoError(w.t, err)
	body := make([]byte, binary.LittleEndian.Uint32(b[:]))
	_, err = io.ReadFull(w.conn, body)
	require.NoError(w.t, err)
	var v map[string]any
	require.NoError(w.t, json.Unmarshal(body, &v))
	return v
}

func start(port int) map[string]any {
	return map[string]any{"cmd": cmdStart, "port": port, "error_port": port + 1}
}

// The tracker's rounds: who gets which rank and whose address, table by table.
func TestTrackerRing(t *testing.T) {
	for _, c := range []struct {
		name  string
		tasks []string // in the order they connect; worker i listens on port 1000+10*i
		ranks []int    // the rank each gets, in the same order
	}{
		{"ranks are the workers' indexes, whatever the order they come in", []string{"worker:2", "worker:0", "worker:1"}, []int{2, 0, 1}},
		{"indexes past 9 sort as numbers", []string{"worker:10", "worker:9"}, []int{1, 0}},
		{"other task ids: by host, then task id", []string{"b", "a", "c"}, []int{1, 0, 2}},
		{"one worker is its own successor", []string{"worker:0"}, []int{0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, logged := serveTracker(t, len(c.tasks))
			ws := make([]*worker, len(c.tasks))
			portOfRank := map[int]int{}
			for i, task := range c.tasks {
				ws[i] = dial(t, addr, task, start(1000+10*i))
				require.Equal(t, map[string]any{"world_size": float64(len(c.tasks))}, ws[i].recv())
				portOfRank[c.ranks[i]] = 1000 + 10*i
			}
			n := len(c.tasks)
			for i, w := range ws {
				next := (c.ranks[i] + 1) % n
				require.Equal(t, map[string]any{"rank": float64(next), "host": "127.0.0.1", "port": float64(portOfRank[next])}, w.recv(), c.tasks[i])
			}
			require.Eventually(t, func() bool { return strings.Contains(logged(), fmt.Sprintf("the collective of %d workers started", n)) }, 5*time.Second, 10*time.Millisecond)
		})
	}
}

// After every worker's shutdown the tracker gathers a new round (a
// restarted cluster); a worker starting while a collective runs also
// begins a new one. Prints and errors reach the log.
func TestTrackerRoundsAndMessages(t *testing.T) {
	addr, logged := serveTracker(t, 2)
	for round := range 3 {
		a, b := dial(t, addr, "worker:0", start(2000)), dial(t, addr, "worker:1", start(2010))
		a.recv()
		b.recv()
		require.Equal(t, float64(1), a.recv()["rank"], "round %d", round)
		require.Equal(t, float64(0), b.recv()["rank"], "round %d", round)
		if round == 0 {
			dial(t, addr, "worker:0", map[string]any{"cmd": cmdShutdown})
			dial(t, addr, "worker:1", map[string]any{"cmd": cmdShutdown})
		}
	}
	dial(t, addr, "worker:1", map[string]any{"cmd": cmdPrint, "msg": "[0] train-rmse:1.5"})
	dial(t, addr, "worker:0", map[string]any{"cmd": cmdError, "msg": "Socket error\nconnection reset", "code": 104})
	require.Eventually(t, func() bool {
		l := logged()
		return strings.Contains(l, "xgboost: [0] train-rmse:1.5") && strings.Contains(l, "xgboost tracker: worker:0 reports an error (code 104): Socket error connection reset")
	}, 5*time.Second, 10*time.Millisecond)
}

// Whoever reaches the port may connect: what is not XGBoost's protocol,
// or too big, is refused alone, and the round goes on.
func TestTrackerRefusesOthers(t *testing.T) {
	for _, c := range []struct {
		name string
		send []byte
		log  string
	}{
		{"not the magic number", []byte("GET / HTTP/1.1\r\n\r\n"), "not an XGBoost worker (magic 0x20544547)"},
		{"a message too big", append(binary.LittleEndian.AppendUint32(nil, magic), binary.LittleEndian.AppendUint32(nil, 1<<30)...), "message of 1073741824 bytes (at most 65536)"},
		{"not JSON", append(append(binary.LittleEndian.AppendUint32(nil, magic), binary.LittleEndian.AppendUint32(nil, 2)...), "{x"...), "hello: not JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, logged := serveTracker(t, 1)
			conn, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer conn.Close()
			_, err = conn.Write(c.send)
			require.NoError(t, err)
			require.Eventually(t, func() bool { return strings.Contains(logged(), c.log) }, 5*time.Second, 10*time.Millisecond)
			w := dial(t, addr, "worker:0", start(3000))
			w.recv()
			require.Equal(t, float64(0), w.recv()["rank"])
		})
	}
	addr, logged := serveTracker(t, 1)
	dial(t, addr, "worker:0", map[string]any{"cmd": cmdStart, "port": 0})
	require.Eventually(t, func() bool { return strings.Contains(logged(), "start from worker:0: invalid port 0") }, 5*time.Second, 10*time.Millisecond)
}

// A client that connects and says nothing is let go after handshakeWait;
// past maxConns at once, a connection is closed at once, and the round goes
// on once they are gone.
func TestTrackerBoundsIdleClients(t *testing.T) {
	wait, conns := handshakeWait, maxConns
	handshakeWait, maxConns = 300*time.Millisecond, 2
	t.Cleanup(func() { handshakeWait, maxConns = wait, conns })
	addr, logged := serveTracker(t, 1)
	var idle []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		idle = append(idle, c)
	}
	time.Sleep(50 * time.Millisecond) // both accepted: the slots are full
	third, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer third.Close()
	require.NoError(t, third.SetReadDeadline(time.Now().Add(5*time.Second)))
	n, err := third.Read(make([]byte, 4))
	require.Equal(t, 0, n)
	require.ErrorIs(t, err, io.EOF, "closed without a word")
	for _, c := range idle {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err := io.ReadAll(c) // the magic number, then the close
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return strings.Count(logged(), "i/o timeout") == 2 }, 5*time.Second, 10*time.Millisecond)
	w := dial(t, addr, "worker:0", start(4000))
	w.recv()
	require.Equal(t, float64(0), w.recv()["rank"])
}
