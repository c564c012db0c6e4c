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

// ReadRequest decodes one command from r. It allocates at most what the
// bounds allow: a length over its bound is an error before any allocation.
func ReadRequest(r *bufio.Reader) (Request, error) {
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
		k, err := readKey(r)
		if err != nil {
			return q, err
		}
		v, err := readValue(r)
		q.Keys, q.Values = []string{k}, [][]byte{v}
		return q, err
	case CmdCompareSet:
		k, err := readKey(r)
		if err != nil {
			return q, err
		}
		old, err := readValue(r)
		if err != nil {
			return q, err
		}
		nv, err := readValue(r)
		q.Keys, q.Values = []string{k}, [][]byte{old, nv}
		return q, err
	case CmdGet, CmdDeleteKey:
		k, err := readKey(r)
		q.Keys = []string{k}
		return q, err
	case CmdAdd:
		k, err := readKey(r)
		if err != nil {
			return q, err
		}
		v, err := readU64(r)
		q.Keys, q.Int = []string{k}, int64(v)
		return q, unexpectedEOF(err)
	case CmdCheck, CmdWait, CmdMultiGet, CmdMultiSet:
		n, err := readU64(r)
		if err != nil {
			return q, unexpectedEOF(err)
		}
		if n > MaxKeys {
			return q, fmt.Errorf("%d keys: %w (%d)", n, errTooLong, MaxKeys)
		}
		for i := uint64(0); i < n; i++ {
			k, err := readKey(r)
			if err != nil {
				return q, err
			}
			q.Keys = append(q.Keys, k)
			if q.Cmd == CmdMultiSet {
				v, err := readValue(r)
				if err != nil {
					return q, err
				}
				q.Values = append(q.Values, v)
			}
		}
		return q, nil
	case CmdNumKeys, CmdCancelWait:
		return q, nil
	}
	return q, fmt.Errorf("unknown command %d", b)
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

func readBytes(r io.Reader, max int) ([]byte, error) {
	n, err := readU64(r)
	if err != nil {
		return nil, unexpectedEOF(err)
	}
	if n > uint64(max) {
		return nil, fmt.Errorf("%d bytes: %w (%d)", n, errTooLong, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, unexpectedEOF(err)
	}
	return b, nil
}

func readKey(r io.Reader) (string, error) {
	b, err := readBytes(r, MaxKeyLen)
	return string(b), err
}

func readValue(r io.Reader) ([]byte, error) { return readBytes(r, MaxValueLen) }

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
