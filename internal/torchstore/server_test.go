package torchstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// client is the tests' TCPStore client: requests as torch encodes them.
type client struct {
	t  *testing.T
	nc net.Conn
	r  *bufio.Reader
}

func serve(t *testing.T) (*Server, string) { return serveWith(t, DefaultRequestTimeout) }

// serveWith serves a store whose requests time out after timeout.
func serveWith(t *testing.T, timeout time.Duration) (*Server, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := New()
	s.RequestTimeout = timeout
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return within 5 s of its context's end")
		}
	})
	return s, ln.Addr().String()
}

func dial(t *testing.T, addr string, validate bool) *client {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	require.NoError(t, nc.SetDeadline(time.Now().Add(10*time.Second)))
	c := &client{t: t, nc: nc, r: bufio.NewReader(nc)}
	if validate {
		c.send(Request{Cmd: CmdValidate, Int: int64(ValidationMagic)})
	}
	return c
}

func (c *client) send(q Request) {
	_, err := c.nc.Write(q.Encode())
	require.NoError(c.t, err)
}

func (c *client) bytes() []byte {
	var n [8]byte
	_, err := io.ReadFull(c.r, n[:])
	require.NoError(c.t, err)
	b := make([]byte, binary.LittleEndian.Uint64(n[:]))
	_, err = io.ReadFull(c.r, b)
	require.NoError(c.t, err)
	return b
}

func (c *client) u64() uint64 {
	var n [8]byte
	_, err := io.ReadFull(c.r, n[:])
	require.NoError(c.t, err)
	return binary.LittleEndian.Uint64(n[:])
}

func (c *client) byte1() byte {
	b, err := c.r.ReadByte()
	require.NoError(c.t, err)
	return b
}

func set(k, v string) Request {
	return Request{Cmd: CmdSet, Keys: []string{k}, Values: [][]byte{[]byte(v)}}
}
func get(k string) Request { return Request{Cmd: CmdGet, Keys: []string{k}} }

func TestStoreCommands(t *testing.T) {
	_, addr := serve(t)
	c := dial(t, addr, true)

	c.send(Request{Cmd: CmdPing, Int: 0xdeadbeef})
	var nonce [4]byte
	_, err := io.ReadFull(c.r, nonce[:])
	require.NoError(t, err)
	require.Equal(t, uint32(0xdeadbeef), binary.LittleEndian.Uint32(nonce[:]))

	c.send(set("a", "1"))
	c.send(get("a"))
	require.Equal(t, "1", string(c.bytes()))

	c.send(Request{Cmd: CmdAdd, Keys: []string{"n"}, Int: 5})
	require.Equal(t, uint64(5), c.u64())
	c.send(Request{Cmd: CmdAdd, Keys: []string{"n"}, Int: -2})
	require.Equal(t, uint64(3), c.u64())

	cas := func(k, old, nv string) string {
		c.send(Request{Cmd: CmdCompareSet, Keys: []string{k}, Values: [][]byte{[]byte(old), []byte(nv)}})
		return string(c.bytes())
	}
	require.Equal(t, "2", cas("a", "1", "2"), "swapped")
	require.Equal(t, "2", cas("a", "x", "3"), "not swapped: the current value")
	require.Equal(t, "new", cas("fresh", "", "new"), "absent key, empty expectation: set")
	require.Equal(t, "want", cas("absent", "want", "v"), "absent key: the expectation back, as torch's server does")

	c.send(Request{Cmd: CmdCheck, Keys: []string{"a", "n"}})
	require.Equal(t, checkReady, c.byte1())
	c.send(Request{Cmd: CmdCheck, Keys: []string{"a", "nope"}})
	require.Equal(t, checkNotReady, c.byte1())

	c.send(Request{Cmd: CmdMultiSet, Keys: []string{"m1", "m2"}, Values: [][]byte{[]byte("x"), []byte("y")}})
	c.send(Request{Cmd: CmdMultiGet, Keys: []string{"m2", "m1"}})
	require.Equal(t, "y", string(c.bytes()))
	require.Equal(t, "x", string(c.bytes()))

	c.send(Request{Cmd: CmdAppend, Keys: []string{"a"}, Values: [][]byte{[]byte("bc")}})
	c.send(get("a"))
	require.Equal(t, "2bc", string(c.bytes()))

	c.send(Request{Cmd: CmdNumKeys})
	require.Equal(t, uint64(5), c.u64(), "a, n, fresh, m1, m2: no \"absent\"")
	c.send(Request{Cmd: CmdDeleteKey, Keys: []string{"a"}})
	require.Equal(t, uint64(1), c.u64())
	c.send(Request{Cmd: CmdDeleteKey, Keys: []string{"a"}})
	require.Equal(t, uint64(0), c.u64())
}

// A WAIT is answered once every key is set, by whichever connection sets
// the last; a cancelled wait is answered WAIT_CANCELED and no more.
func TestStoreWait(t *testing.T) {
	_, addr := serve(t)
	waiter, setter := dial(t, addr, true), dial(t, addr, true)

	waiter.send(Request{Cmd: CmdWait, Keys: []string{"k1", "k2"}})
	setter.send(set("k1", "v"))
	setter.send(get("k1")) // the set has been handled once this answers
	require.Equal(t, "v", string(setter.bytes()))
	require.NoError(t, waiter.nc.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
	_, err := waiter.r.ReadByte()
	require.Error(t, err, "no answer while k2 is missing")
	require.NoError(t, waiter.nc.SetReadDeadline(time.Now().Add(10*time.Second)))
	setter.send(Request{Cmd: CmdAdd, Keys: []string{"k2"}, Int: 1})
	require.Equal(t, uint64(1), setter.u64())
	require.Equal(t, waitStop, waiter.byte1())

	waiter.send(Request{Cmd: CmdWait, Keys: []string{"k1"}})
	require.Equal(t, waitStop, waiter.byte1(), "keys already there: at once")

	waiter.send(Request{Cmd: CmdWait, Keys: []string{"never"}})
	waiter.send(Request{Cmd: CmdCancelWait})
	require.Equal(t, waitCanceled, waiter.byte1())
	setter.send(set("never", "now"))
	waiter.send(Request{Cmd: CmdPing, Int: 7})
	var nonce [4]byte
	_, err = io.ReadFull(waiter.r, nonce[:])
	require.NoError(t, err)
	require.Equal(t, []byte{7, 0, 0, 0}, nonce[:], "the cancelled wait was not answered after all")
}

// A connection that does not validate first, or sends a length over its
// bound, or an unknown command, is dropped; others go on.
func TestStoreDropsBadClients(t *testing.T) {
	_, addr := serve(t)
	good := dial(t, addr, true)
	bad := []struct {
		name string
		raw  []byte
	}{
		{"no validation", set("a", "b").Encode()},
		{"wrong magic", Request{Cmd: CmdValidate, Int: 1}.Encode()},
		{"key too long", append(Request{Cmd: CmdValidate, Int: int64(ValidationMagic)}.Encode(), append([]byte{byte(CmdGet)}, binary.LittleEndian.AppendUint64(nil, MaxKeyLen+1)...)...)},
		{"value too long", append(Request{Cmd: CmdValidate, Int: int64(ValidationMagic)}.Encode(), append(append([]byte{byte(CmdSet)}, appendBytes(nil, []byte("k"))...), binary.LittleEndian.AppendUint64(nil, 1<<62)...)...)},
		{"too many keys", append(Request{Cmd: CmdValidate, Int: int64(ValidationMagic)}.Encode(), append([]byte{byte(CmdWait)}, binary.LittleEndian.AppendUint64(nil, MaxKeys+1)...)...)},
		{"unknown command", append(Request{Cmd: CmdValidate, Int: int64(ValidationMagic)}.Encode(), 200)},
		{"get of a missing key", append(Request{Cmd: CmdValidate, Int: int64(ValidationMagic)}.Encode(), get("missing").Encode()...)},
	}
	for _, b := range bad {
		c := dial(t, addr, false)
		_, err := c.nc.Write(b.raw)
		require.NoError(t, err)
		_, err = c.r.ReadByte()
		require.ErrorIs(t, err, io.EOF, b.name+": the server closes the connection")
	}
	good.send(set("still", "here"))
	good.send(get("still"))
	require.Equal(t, "here", string(good.bytes()))
}

func TestStoreBoundsItsSize(t *testing.T) {
	s, addr := serve(t)
	c := dial(t, addr, true)
	big := bytes.Repeat([]byte("x"), MaxValueLen)
	n := 0
	for ; n < MaxStoreBytes/MaxValueLen+1; n++ {
		if _, err := c.nc.Write(Request{Cmd: CmdSet, Keys: []string{string(rune('a' + n))}, Values: [][]byte{big}}.Encode()); err != nil {
			break
		}
	}
	_, err := c.r.ReadByte()
	require.Error(t, err, "the connection that overfills the store is dropped")
	s.mu.Lock()
	defer s.mu.Unlock()
	require.LessOrEqual(t, s.bytes, MaxStoreBytes)
}

// Encode and ReadRequest agree on every command.
func TestRequestRoundTrip(t *testing.T) {
	for _, q := range []Request{
		{Cmd: CmdValidate, Int: int64(ValidationMagic)}, {Cmd: CmdPing, Int: 9}, set("k", "v"),
		{Cmd: CmdCompareSet, Keys: []string{"k"}, Values: [][]byte{{}, []byte("n")}}, get("k"),
		{Cmd: CmdAdd, Keys: []string{"k"}, Int: -3}, {Cmd: CmdCheck, Keys: []string{"a", "b"}},
		{Cmd: CmdWait, Keys: []string{"a"}}, {Cmd: CmdNumKeys}, {Cmd: CmdDeleteKey, Keys: []string{"k"}},
		{Cmd: CmdAppend, Keys: []string{"k"}, Values: [][]byte{[]byte("x")}}, {Cmd: CmdMultiGet, Keys: []string{"a", "b"}},
		{Cmd: CmdMultiSet, Keys: []string{"a", "b"}, Values: [][]byte{[]byte("1"), []byte("2")}}, {Cmd: CmdCancelWait},
	} {
		got, err := ReadRequest(bufio.NewReader(bytes.NewReader(q.Encode())), nil)
		require.NoError(t, err)
		require.Equal(t, q, got)
	}
}
