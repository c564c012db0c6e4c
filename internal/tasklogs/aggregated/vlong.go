package aggregated

import (
	"encoding/binary"
	"errors"
	"io"
)

var errVLong = errors.New("corrupt variable-length integer")

// readVLong decodes TFile's variable-length integer (Hadoop's
// org.apache.hadoop.io.file.tfile.Utils.readVLong, not WritableUtils'):
// one byte for [-32, 127], else the first byte says how many follow.
func readVLong(r io.ByteReader) (int64, error) {
	b, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	first := int64(int8(b))
	if first >= -32 {
		return first, nil
	}
	next := func(n int) (uint64, error) {
		var v uint64
		for i := 0; i < n; i++ {
			c, err := r.ReadByte()
			if err != nil {
				return 0, noEOF(err)
			}
			v = v<<8 | uint64(c)
		}
		return v, nil
	}
	switch (first + 128) / 8 {
	case 7, 8, 9, 10, 11:
		v, err := next(1)
		return (first+52)<<8 | int64(v), err
	case 3, 4, 5, 6:
		v, err := next(2)
		return (first+88)<<16 | int64(v), err
	case 1, 2:
		v, err := next(3)
		return (first+112)<<24 | int64(v), err
	case 0:
		n := int(first + 129)
		if n < 4 || n > 8 {
			return 0, errVLong
		}
		v, err := next(n)
		if err != nil {
			return 0, err
		}
		// Sign-extend the n-byte big-endian value.
		shift := uint(64 - 8*n)
		return int64(v<<shift) >> shift, nil
	}
	return 0, errVLong
}

// readVInt is readVLong limited to [lo, hi].
func readVInt(r io.ByteReader, lo, hi int64, what string) (int64, error) {
	v, err := readVLong(r)
	if err != nil {
		return 0, noEOF(err)
	}
	if v < lo || v > hi {
		return 0, &FormatError{What: what, Detail: "value " + itoa(v) + " out of range"}
	}
	return v, nil
}

// readString reads Utils.writeString: a vint length then that many bytes.
func readString(r byteReader, max int64, what string) (string, error) {
	n, err := readVInt(r, 0, max, what+" length")
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", noEOF(err)
	}
	return string(b), nil
}

// readUTF reads Java's DataOutput.writeUTF: a 2-byte length then modified
// UTF-8 (identical to UTF-8 for the names and numbers aggregated logs hold).
func readUTF(r io.Reader) (string, error) {
	var l [2]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return "", err
	}
	b := make([]byte, binary.BigEndian.Uint16(l[:]))
	if _, err := io.ReadFull(r, b); err != nil {
		return "", noEOF(err)
	}
	return string(b), nil
}

type byteReader interface {
	io.Reader
	io.ByteReader
}

// noEOF turns an EOF inside a structure into ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
