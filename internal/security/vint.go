package security

import (
	"errors"
	"math/bits"
)

// Hadoop's WritableUtils variable-length integers. Not protobuf varints: a
// value in [-112, 127] is one byte; otherwise a marker byte gives sign and
// byte count (-113..-120: positive, 1..8 bytes; -121..-128: negative, stored
// one's-complemented) followed by the magnitude, big-endian.

// appendVLong appends v in WritableUtils.writeVLong encoding.
func appendVLong(b []byte, v int64) []byte {
	if v >= -112 && v <= 127 {
		return append(b, byte(v))
	}
	marker := -112
	u := uint64(v)
	if v < 0 {
		u = ^u
		marker = -120
	}
	n := (bits.Len64(u) + 7) / 8
	b = append(b, byte(int8(marker-n)))
	for i := n - 1; i >= 0; i-- {
		b = append(b, byte(u>>(8*i)))
	}
	return b
}

var errShortVInt = errors.New("truncated vint")

// readVLong decodes one WritableUtils vlong from b, returning it and the
// number of bytes consumed.
func readVLong(b []byte) (int64, int, error) {
	if len(b) == 0 {
		return 0, 0, errShortVInt
	}
	first := int8(b[0])
	if first >= -112 {
		return int64(first), 1, nil
	}
	negative := first < -120
	n := int(-112 - int(first)) // magnitude bytes, 1..8
	if negative {
		n = int(-120 - int(first))
	}
	if len(b) < 1+n {
		return 0, 0, errShortVInt
	}
	var u uint64
	for _, c := range b[1 : 1+n] {
		u = u<<8 | uint64(c)
	}
	if negative {
		u = ^u
	}
	return int64(u), 1 + n, nil
}
