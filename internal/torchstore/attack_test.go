package torchstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// announce is what the attack sends on each connection: a validation and
// the start of a SET whose value announces MaxValueLen bytes, 24 bytes in
// all.
func announce() []byte {
	b := Request{Cmd: CmdValidate, Int: int64(ValidationMagic)}.Encode()
	b = append(b, byte(CmdSet))
	b = appendBytes(b, []byte("kk"))
	return binary.LittleEndian.AppendUint64(b, MaxValueLen)
}

// attack opens n connections to addr, each sending announce() and then
// part bytes of the value, from a goroutine each, and returns them.
func attack(t *testing.T, addr string, n, part int) []net.Conn {
	conns := make([]net.Conn, n)
	payload := make([]byte, part) // shared: the test's own heap stays small
	for i := range conns {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err)
		t.Cleanup(func() { nc.Close() })
		conns[i] = nc
		go func() {
			_ = nc.SetWriteDeadline(time.Now().Add(20 * time.Second))
			if _, err := nc.Write(announce()); err == nil {
				_, _ = nc.Write(payload)
			}
		}()
	}
	return conns
}

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestAttackStoreAnnouncedValues: 300 connections announcing a value of
// MaxValueLen and sending 24 bytes each cost the store about a page each,
// not the announced 8 MiB (before: 2.4 GiB of heap); a client blocked in
// WAIT longer than the request timeout keeps its connection, while the
// attack's connections are closed once the timeout has passed.
func TestAttackStoreAnnouncedValues(t *testing.T) {
	const timeout = 2 * time.Second
	_, addr := serveWith(t, timeout)
	waiter, setter := dial(t, addr, true), dial(t, addr, true)
	require.NoError(t, waiter.nc.SetDeadline(time.Now().Add(30*time.Second)))
	waiter.send(Request{Cmd: CmdWait, Keys: []string{"rendezvous"}})

	runtime.GC()
	before := heapInUse()
	start := time.Now()
	conns := attack(t, addr, 300, 0)
	time.Sleep(500 * time.Millisecond) // the server reads what arrived
	grown := int64(heapInUse()) - int64(before)
	t.Logf("store heap growth under the attack: %.1f MiB", float64(grown)/(1<<20))
	require.Less(t, grown, int64(16<<20), "300 announced values cost the store at most its buffers")

	for i, nc := range conns {
		require.NoError(t, nc.SetReadDeadline(time.Now().Add(timeout+5*time.Second)))
		_, err := nc.Read(make([]byte, 1))
		require.ErrorIs(t, err, io.EOF, "attack connection %d is closed after the timeout", i)
	}
	require.Less(t, time.Since(start), timeout+5*time.Second)
	require.Greater(t, time.Since(start), timeout-time.Second, "not before the timeout")

	require.Greater(t, time.Since(start), timeout, "the waiter has waited longer than the request timeout")
	setter.send(set("rendezvous", "ok"))
	require.Equal(t, waitStop, waiter.byte1(), "the WAIT outlives the request timeout")
	waiter.send(get("rendezvous"))
	require.Equal(t, "ok", string(waiter.bytes()))
}

// TestAttackStoreInFlightBudget: connections that send the first MiBs of
// announced values together take at most MaxInFlightBytes; those that
// would take more wait and are dropped at their deadline, and the store
// serves a torch client again once they are gone.
func TestAttackStoreInFlightBudget(t *testing.T) {
	const timeout = 3 * time.Second
	s, addr := serveWith(t, timeout)
	runtime.GC()
	before := heapInUse()
	conns := attack(t, addr, 40, 4<<20)
	time.Sleep(time.Second)
	grown := int64(heapInUse()) - int64(before)
	t.Logf("store heap growth with 40 × 4 MiB sent: %.1f MiB (budget %d MiB)", float64(grown)/(1<<20), MaxInFlightBytes>>20)
	require.LessOrEqual(t, s.inFlight.inUse(), MaxInFlightBytes)
	require.Greater(t, s.inFlight.inUse(), MaxInFlightBytes/2, "the attack fills the budget")
	require.Less(t, grown, int64(MaxInFlightBytes+16<<20), "heap growth within the budget and buffers")

	for _, nc := range conns {
		require.NoError(t, nc.SetReadDeadline(time.Now().Add(timeout+5*time.Second)))
		_, err := io.Copy(io.Discard, nc)
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "closed by the store (EOF or reset), not left open: %v", err)
	}
	require.Eventually(t, func() bool { return s.inFlight.inUse() == 0 }, 5*time.Second, 10*time.Millisecond,
		"every byte given back")
	c := dial(t, addr, true)
	big := bytes.Repeat([]byte("v"), MaxValueLen)
	c.send(Request{Cmd: CmdSet, Keys: []string{"big"}, Values: [][]byte{big}})
	c.send(get("big"))
	require.Equal(t, big, c.bytes())
}
