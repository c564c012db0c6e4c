package torchstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Command is a TCPStore query type, torch's QueryType.
type Command uint8

// The commands, in torch's order.
const (
	CmdValidate Command = iota
	CmdSet
	CmdCompareSet
	CmdGet
	CmdAdd
	CmdCheck
	CmdWait
	CmdNumKeys
	CmdDeleteKey
	CmdAppend
	CmdMultiGet
	CmdMultiSet
	CmdCancelWait
	CmdPing
	// torch's queue commands (QUEUE_PUSH, QUEUE_POP, QUEUE_LEN) follow;
	// neither torchrun nor init_process_group uses them, and this server
	// drops a client that sends one.
)

// ValidationMagic is what a client sends after CmdValidate.
const ValidationMagic uint32 = 0x3C85F7CE

// Replies to CHECK and WAIT.
const (
	checkReady    byte = 0
	checkNotReady byte = 1
	waitStop      byte = 0
	waitCanceled  byte = 1
)

// Bounds on what a client may send.
const (
	MaxKeyLen   = 8 << 10 // bytes of one key
	MaxValueLen = 8 << 20 // bytes of one value
	MaxKeys     = 128 << 10
	// MaxStoreBytes bounds the keys and values held at once.
	MaxStoreBytes = 256 << 20
	// MaxConns bounds the connections served at once.
	MaxConns = 4096
)

// Request is one decoded command.
type Request struct {
	Cmd Command
	// Keys: one for SET, GET, ADD, ...; several for CHECK, WAIT,
	// MULTI_GET, MULTI_SET.
	Keys []string
	// Values: SET and APPEND have one; COMPARE_SET two (expected,
	// new); MULTI_SET one per key.
	Values [][]byte
	// Int is ADD's increment, PING's nonce and VALIDATE's magic number.
	Int int64
}

var errTooLong = errors.New("length over the protocol's bound")

// Grant is asked for n more bytes before a decoder allocates them: it
// answers nil to allow them, else why not (the decoding then fails with
// that error). A nil Grant allows every allocation the bounds allow.
type Grant func(n int) error

// firstChunk is the first buffer for a key or a value; a buffer then
// doubles as its bytes arrive, so that an announced length costs nothing
// until its bytes come.
const firstChunk = 4 << 10

// decoder reads one request, asking grant for every allocation.
type decoder struct {
	r     *bufio.Reader
	grant Grant
}

// ReadRequest decodes one command from r. A length over its bound is an
// error before any allocation; within its bound, a key or a value grows as
// its bytes arrive (at most twice what arrived, plus firstChunk), and
// grant, unless nil, is asked for each allocation first.
func ReadRequest(r *bufio.Reader, grant Grant) (Request, error) {
	if grant == nil {
		grant = func(int) error { return nil }
	}
	d := decoder{r: r, grant: grant}
	b, err := r.ReadByte()
	if err != nil {
		return Request{}, err
	}
	q := Request{Cmd: Command(b)}
	switch q.Cmd {
	case CmdValidate, CmdPing:
		v, err := readU32(r)
		q.Int = int64(v)
		return q, unexpectedEOF(err)
	case CmdSet, CmdAppend:
		k, err := d.readKey()
		if err != nil {
			return q, err
		}
		v, err := d.readValue()
		q.Keys, q.Values = []string{k}, [][]byte{v}
		return q, err
	case CmdCompareSet:
		k, err := d.readKey()
		if err != nil {
			return q, err
		}
		old, err := d.readValue()
		if err != nil {
			return q, err
		}
		nv, err := d.readValue()
		q.Keys, q.Values = []string{k}, [][]byte{old, nv}
		return q, err
	case CmdGet, CmdDeleteKey:
		k, err := d.readKey()
		q.Keys = []string{k}
		return q, err
	case CmdAdd:
		k, err := d.readKey()
		if err != nil {
			return q, err
		}
		v, err := readU64(r)
		q.Keys, q.Int = []string{k}, int64(v)
		return q, unexpectedEOF(err)
	case CmdCheck, CmdWait, CmdMultiGet, CmdMultiSet:
		return q, d.readMany(&q)
	case CmdNumKeys, CmdCancelWait:
		return q, nil
	}
	return q, fmt.Errorf("unknown command %d", b)
}

// readMany reads the count of keys (and values, for MULTI_SET) of q and
// them. The slices of keys and values grow as they arrive too.
func (d decoder) readMany(q *Request) error {
	n, err := readU64(d.r)
	if err != nil {
		return unexpectedEOF(err)
	}
	if n > MaxKeys {
		return fmt.Errorf("%d keys: %w (%d)", n, errTooLong, MaxKeys)
	}
	const sliceEntry = 24 // bytes of a string or slice header
	for i := uint64(0); i < n; i++ {
		if len(q.Keys) == cap(q.Keys) {
			if err := d.grant(2 * sliceEntry * (cap(q.Keys) + 1)); err != nil {
				return err
			}
		}
		k, err := d.readKey()
		if err != nil {
			return err
		}
		q.Keys = append(q.Keys, k)
		if q.Cmd == CmdMultiSet {
			v, err := d.readValue()
			if err != nil {
				return err
			}
			q.Values = append(q.Values, v)
		}
	}
	return nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func readU32(r io.Reader) (uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

func readU64(r io.Reader) (uint64, error) {
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// readBytes reads a length, at most limit, and that many bytes into a buffer
// that doubles as they arrive: the announced length alone allocates
// nothing past firstChunk.
func (d decoder) readBytes(limit int) ([]byte, error) {
	n64, err := readU64(d.r)
	if err != nil {
		return nil, unexpectedEOF(err)
	}
	if n64 > uint64(limit) {
		return nil, fmt.Errorf("%d bytes: %w (%d)", n64, errTooLong, limit)
	}
	n := int(n64)
	b := []byte{}
	for len(b) < n {
		if len(b) == cap(b) {
			size := min(n, max(2*cap(b), firstChunk))
			if err := d.grant(size); err != nil {
				return nil, err
			}
			b = append(make([]byte, 0, size), b...)
		}
		m, err := d.r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err != nil && len(b) < n {
			return nil, unexpectedEOF(err)
		}
	}
	return b, nil
}

func (d decoder) readKey() (string, error) {
	b, err := d.readBytes(MaxKeyLen)
	if err != nil {
		return "", err
	}
	if err := d.grant(len(b)); err != nil {
		return "", err
	}
	return string(b), nil
}

func (d decoder) readValue() ([]byte, error) { return d.readBytes(MaxValueLen) }

// Encoders of replies (and of requests, for the tests' client).

func appendU32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func appendU64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }
func appendBytes(b, v []byte) []byte {
	return append(appendU64(b, uint64(len(v))), v...)
}

// Encode renders q as a client sends it.
func (q Request) Encode() []byte {
	b := []byte{byte(q.Cmd)}
	switch q.Cmd {
	case CmdValidate, CmdPing:
		return appendU32(b, uint32(q.Int))
	case CmdAdd:
		return appendU64(appendBytes(b, []byte(q.Keys[0])), uint64(q.Int))
	case CmdCheck, CmdWait, CmdMultiGet, CmdMultiSet:
		b = appendU64(b, uint64(len(q.Keys)))
		for i, k := range q.Keys {
			b = appendBytes(b, []byte(k))
			if q.Cmd == CmdMultiSet {
				b = appendBytes(b, q.Values[i])
			}
		}
		return b
	case CmdNumKeys, CmdCancelWait:
		return b
	}
	for _, k := range q.Keys {
		b = appendBytes(b, []byte(k))
	}
	for _, v := range q.Values {
		b = appendBytes(b, v)
	}
	return b
}
