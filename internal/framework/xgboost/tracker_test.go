package xgboost

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/taskspec"
)

// testKey is the job service's key in these tests.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// proof is worker i's task_id, as its launcher gives it (DMLC_TASK_ID).
func proof(i int) string {
	return TaskID(i, framework.JobServiceToken(testKey, taskspec.TaskID{Type: taskspec.Worker, Index: i}))
}

// serveTracker starts a tracker for n workers on loopback; its log lines
// go to the returned func.
func serveTracker(t *testing.T, n int) (addr string, logged func() string) {
	t.Helper()
	addr, logged, stop := startTracker(t, n)
	t.Cleanup(func() { require.NoError(t, stop()) })
	return addr, logged
}

// startTracker is serveTracker with its stop: Serve's end and its error.
func startTracker(t *testing.T, n int) (addr string, logged func() string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var lines []string
	done := make(chan error, 1)
	go func() {
		done <- Tracker{Workers: n, Key: testKey}.Serve(ctx, ln, func(f string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, fmt.Sprintf(f, a...))
		})
	}()
	var once sync.Once
	var served error
	stop = func() error { once.Do(func() { cancel(); served = <-done }); return served }
	t.Cleanup(func() { _ = stop() })
	return ln.Addr().String(), func() string { mu.Lock(); defer mu.Unlock(); return strings.Join(lines, "\n") }, stop
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
	if cmd != nil {
		// XGBoost's hello before the collective: rank 0 whoever it is.
		w.sendRaw(map[string]any{"world_size": -1, "rank": 0, "task_id": taskID}, cmd)
	}
	return w
}

// dialInCollective is dial with the hello of worker index of a collective
// of world: XGBoost's once it is one.
func dialInCollective(t *testing.T, addr string, index, world int, cmd map[string]any) {
	t.Helper()
	dial(t, addr, "", nil).sendRaw(map[string]any{"world_size": world, "rank": index, "task_id": proof(index)}, cmd)
}

// sendRaw sends messages in one write, as a client that does not wait for
// the tracker to read them.
func (w *worker) sendRaw(msgs ...any) {
	var out []byte
	for _, m := range msgs {
		body, err := json.Marshal(m)
		require.NoError(w.t, err)
		out = append(append(out, binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
	}
	_, err := w.conn.Write(out)
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
		name    string
		workers []int // the workers' indexes, in the order they connect; the i-th listens on port 1000+10*i
	}{
		{"ranks are the workers' indexes, whatever the order they come in", []int{2, 0, 1}},
		{"indexes past 9 sort as numbers", []int{10, 9, 0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"one worker is its own successor", []int{0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, logged := serveTracker(t, len(c.workers))
			ws := make([]*worker, len(c.workers))
			portOfRank := map[int]int{}
			for i, index := range c.workers {
				ws[i] = dial(t, addr, proof(index), start(1000+10*i))
				require.Equal(t, map[string]any{"world_size": float64(len(c.workers))}, ws[i].recv())
				portOfRank[index] = 1000 + 10*i
			}
			n := len(c.workers)
			for i, w := range ws {
				next := (c.workers[i] + 1) % n
				require.Equal(t, map[string]any{"rank": float64(next), "host": "127.0.0.1", "port": float64(portOfRank[next])}, w.recv(), "worker:%d", c.workers[i])
			}
			require.Eventually(t, func() bool { return strings.Contains(logged(), fmt.Sprintf("the collective of %d workers started", n)) }, 5*time.Second, 10*time.Millisecond)
			require.NotContains(t, logged(), proof(0)[len("worker:0:"):], "no token in the log")
		})
	}
}

// After every worker's shutdown the tracker gathers a new round (a
// restarted cluster); a worker starting while a collective runs also
// begins a new one, and one starting again while its round gathers
// replaces its earlier start. Prints and errors reach the log.
func TestTrackerRoundsAndMessages(t *testing.T) {
	addr, logged := serveTracker(t, 2)
	for round := range 3 {
		a := dial(t, addr, proof(0), start(2000))
		a.recv()
		if round == 2 {
			// worker:0's process ended before the round was complete; the
			// restarted one's start replaces it.
			again := dial(t, addr, proof(0), start(2020))
			again.recv()
			require.Empty(t, readUntilClosed(t, a.conn), "the earlier start is closed")
			a = again
		}
		b := dial(t, addr, proof(1), start(2010))
		b.recv()
		require.Equal(t, float64(1), a.recv()["rank"], "round %d", round)
		require.Equal(t, map[string]any{"rank": float64(0), "host": "127.0.0.1", "port": float64(map[bool]int{true: 2020, false: 2000}[round == 2])}, b.recv(), "round %d", round)
		if round == 0 {
			dialInCollective(t, addr, 0, 2, map[string]any{"cmd": cmdShutdown})
			dialInCollective(t, addr, 1, 2, map[string]any{"cmd": cmdShutdown})
		}
	}
	dialInCollective(t, addr, 1, 2, map[string]any{"cmd": cmdPrint, "msg": "[0] train-rmse:1.5"})
	dialInCollective(t, addr, 0, 2, map[string]any{"cmd": cmdError, "msg": "Socket error\nconnection reset", "code": 104})
	require.Eventually(t, func() bool {
		l := logged()
		return strings.Contains(l, "xgboost: [0] train-rmse:1.5") && strings.Contains(l, "xgboost tracker: worker:0 reports an error (code 104): Socket error connection reset") &&
			strings.Contains(l, "xgboost tracker: worker:0 started again; its earlier start is dropped")
	}, 5*time.Second, 10*time.Millisecond)
}

// stranger connects as XGBoost's client does and sends hello and cmd; the
// tracker answers the magic number, then closes the connection without a
// word.
func stranger(t *testing.T, addr string, hello, cmd map[string]any) {
	t.Helper()
	w := dial(t, addr, "", nil)
	w.sendRaw(hello, cmd)
	require.Empty(t, readUntilClosed(t, w.conn), "the tracker told the stranger something")
}

// readUntilClosed reads conn until the tracker closes it (an EOF, or a
// reset when it left bytes of the client's unread) and returns what it
// was sent.
func readUntilClosed(t *testing.T, conn net.Conn) []byte {
	t.Helper()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	var got []byte
	buf := make([]byte, 512)
	for {
		n, err := conn.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			require.True(t, errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET), "not closed: %v", err)
			return got
		}
	}
}

// Whoever reaches the port may connect, but the tracker hears only the
// job's workers: a hello whose task_id is not a worker's with its token,
// or that claims another rank or size, is closed at once and logged
// (without its task_id), and the workers form their collective all the
// same. A stranger's start takes no worker's place; his print and his
// shutdown reach nothing.
func TestTrackerRefusesStrangers(t *testing.T) {
	other := TaskID(0, framework.JobServiceToken([]byte("another job's key, as long as it"), taskspec.TaskID{Type: taskspec.Worker, Index: 0}))
	token1 := proof(1)[len("worker:1:"):]
	rank := func(r int) *int { return &r }
	for _, c := range []struct {
		name   string
		taskID string
		rank   *int
		world  *int
		log    string
	}{
		{"no task_id", "", nil, nil, "a task_id not of the job's form"},
		{"a task without its token", "worker:0", nil, nil, "a task_id not of the job's form"},
		{"a forged token", TaskID(0, strings.Repeat("0", framework.JobServiceTokenLen)), nil, nil, "a task_id whose token does not verify"},
		{"another worker's token", TaskID(0, token1), nil, nil, "a task_id whose token does not verify"},
		{"another job's token", other, nil, nil, "a task_id whose token does not verify"},
		{"a worker the job does not have", TaskID(2, token1), nil, nil, "a task_id naming no worker of the job's 2"},
		{"an index written otherwise", "worker:01:" + token1, nil, nil, "a task_id naming no worker of the job's 2"},
		{"another task type", "chief:0:" + token1, nil, nil, "a task_id not of the job's form"},
		{"a worker's proof, another rank", proof(1), rank(0), rank(2), "rank 0 claimed by worker:1"},
		{"a worker's proof, another size", proof(1), rank(1), rank(3), "a collective of 3 claimed by worker:1 (the job has 2 workers)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, logged := serveTracker(t, 2)
			h := map[string]any{"world_size": -1, "rank": 0, "task_id": c.taskID}
			if c.rank != nil {
				h["rank"] = *c.rank
			}
			if c.world != nil {
				h["world_size"] = *c.world
			}
			for _, cmd := range []map[string]any{start(5000), {"cmd": cmdPrint, "msg": "a stranger's line"}, {"cmd": cmdShutdown}} {
				stranger(t, addr, h, cmd)
			}
			require.Eventually(t, func() bool { return strings.Count(logged(), "xgboost tracker: refused from 127.0.0.1:") == 3 }, 5*time.Second, 10*time.Millisecond)
			require.Contains(t, logged(), ": "+c.log)
			a, b := dial(t, addr, proof(0), start(5010)), dial(t, addr, proof(1), start(5020))
			a.recv()
			b.recv()
			require.Equal(t, map[string]any{"rank": float64(1), "host": "127.0.0.1", "port": float64(5020)}, a.recv())
			require.Equal(t, map[string]any{"rank": float64(0), "host": "127.0.0.1", "port": float64(5010)}, b.recv())
			require.NotContains(t, logged(), "a stranger's line")
			if i := strings.LastIndexByte(c.taskID, ':'); i > len("worker:") {
				require.NotContains(t, logged(), c.taskID[i+1:], "a token in the log")
			}
		})
	}
}

// What is not XGBoost's protocol, or too big, is refused alone, unanswered
// (not even the magic number), and the round goes on.
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
			got := readUntilClosed(t, conn)
			if c.name == "not the magic number" {
				require.Empty(t, got, "a client without the magic number learns nothing")
			}
			w := dial(t, addr, proof(0), start(3000))
			w.recv()
			require.Equal(t, float64(0), w.recv()["rank"])
		})
	}
	addr, logged := serveTracker(t, 1)
	dial(t, addr, proof(0), map[string]any{"cmd": cmdStart, "port": 0})
	require.Eventually(t, func() bool { return strings.Contains(logged(), "xgboost tracker: worker:0: start: invalid port 0") }, 5*time.Second, 10*time.Millisecond)
}

// Refusals are logged one by one while few, then counted: a stranger
// cannot fill the AM's log.
func TestTrackerCountsRefusals(t *testing.T) {
	addr, logged, stop := startTracker(t, 1)
	forged := map[string]any{"world_size": -1, "rank": 0, "task_id": "worker:0:" + strings.Repeat("f", framework.JobServiceTokenLen)}
	for range 20 {
		stranger(t, addr, forged, start(6000))
	}
	require.Eventually(t, func() bool { return strings.Count(logged(), "refused from") == 5 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, stop())
	require.Regexp(t, `xgboost tracker: refused 15 requests in the last \d+ s: 15 a task_id whose token does not verify; last from 127\.0\.0\.1:\d+`, logged())
}

// A tracker without a key would hear anyone: it does not serve.
func TestTrackerNeedsAKey(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	require.EqualError(t, Tracker{Workers: 1}.Serve(context.Background(), ln, t.Logf),
		"xgboost tracker: a key of 0 bytes; it needs one of at least 16 to tell the job's workers from strangers")
}

// A client that connects and says nothing is let go after handshakeWait,
// having learnt nothing; past maxConns at once, a connection is closed at
// once, and the round goes on once they are gone.
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
		require.Empty(t, readUntilClosed(t, c), "nothing, then the close")
	}
	require.Eventually(t, func() bool { return strings.Count(logged(), "magic: nothing within 300ms (i/o timeout)") == 2 }, 5*time.Second, 10*time.Millisecond)
	w := dial(t, addr, proof(0), start(4000))
	w.recv()
	require.Equal(t, float64(0), w.recv()["rank"])
}
