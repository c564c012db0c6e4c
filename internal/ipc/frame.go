package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// frameChunk caps how much is allocated ahead of data actually arriving, so a
// lying length prefix on a short stream cannot make us allocate MaxFrame.
const frameChunk = 1 << 20

var errMalformed = errors.New("ipc: malformed frame")

// readFrame reads one 4-byte big-endian length-prefixed packet.
func readFrame(r io.Reader, max int) ([]byte, error) {
	var lenBuf [4]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(lenBuf[:])
	// Java writes a signed int; anything with the top bit set is negative.
	if n > uint32(max) || n > 1<<31-1 {
		return nil, fmt.Errorf("%w: %d > %d", ErrFrameTooLarge, int32(n), max)
	}
	size := int(n)
	buf := make([]byte, 0, min(size, frameChunk))
	for len(buf) < size {
		next := min(size, len(buf)+frameChunk)
		buf = slices.Grow(buf, next-len(buf))
		m, err := io.ReadFull(r, buf[len(buf):next])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return buf, nil
}

// appendPacket frames msgs as Hadoop's ResponseBuffer does: a 4-byte length,
// then each message varint-delimited.
func appendPacket(dst []byte, max int, msgs ...proto.Message) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var err error
	for _, m := range msgs {
		dst = protowire.AppendVarint(dst, uint64(proto.Size(m)))
		if dst, err = (proto.MarshalOptions{}).MarshalAppend(dst, m); err != nil {
			return nil, fmt.Errorf("ipc: marshal %s: %w", m.ProtoReflect().Descriptor().FullName(), err)
		}
	}
	n := len(dst) - start - 4
	if n > max {
		return nil, fmt.Errorf("%w: request of %d bytes > %d", ErrFrameTooLarge, n, max)
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(n))
	return dst, nil
}

// consumeDelimited splits one varint-delimited message off b; the length can
// never exceed what is left of the frame.
func consumeDelimited(b []byte) (msg, rest []byte, err error) {
	n, k := protowire.ConsumeVarint(b)
	if k < 0 {
		return nil, nil, fmt.Errorf("%w: bad length varint", errMalformed)
	}
	b = b[k:]
	if n > uint64(len(b)) {
		return nil, nil, fmt.Errorf("%w: delimited length %d exceeds %d remaining bytes", errMalformed, n, len(b))
	}
	return b[:n], b[n:], nil
}

// unmarshalDelimited decodes one delimited message from b into m.
func unmarshalDelimited(b []byte, m proto.Message) (rest []byte, err error) {
	msg, rest, err := consumeDelimited(b)
	if err != nil {
		return nil, err
	}
	if err := proto.Unmarshal(msg, m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errMalformed, m.ProtoReflect().Descriptor().Name(), err)
	}
	return rest, nil
}
