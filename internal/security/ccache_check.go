package security

import (
	"encoding/binary"
	"errors"
)

// errCCacheCounts is a ticket cache whose address or authdata count
// exceeds what the file could hold.
var errCCacheCounts = errors.New("malformed file (a credential's address or authdata count exceeds the file)")

// checkCCacheCounts walks a ccache exactly as gokrb5's parser does and
// refuses one in which a credential's address or authdata count could not
// fit in the bytes left: gokrb5 allocates all entries before reading any,
// so a 4-byte count in a tiny file is a multi-gigabyte allocation, a fatal
// out-of-memory error that safeCall cannot recover. Anything else wrong is
// left to gokrb5 (and safeCall) to report.
func checkCCacheCounts(b []byte) error {
	if len(b) < 2 || b[0] != 5 || b[1] < 1 || b[1] > 4 {
		return nil
	}
	r := &ccacheReader{b: b, p: 2, v: b[1], e: binary.BigEndian}
	if r.v <= 2 {
		r.e = binary.NativeEndian // gokrb5: native order for versions 1 and 2
	}
	if r.v == 4 && !r.header() {
		return nil
	}
	if !r.principal() {
		return nil
	}
	for r.p < len(b) {
		readable, err := r.credential()
		if err != nil || !readable {
			return err
		}
	}
	return nil
}

// ccacheReader is checkCCacheCounts' walk through a ccache: b read up to p,
// in the byte order e of the file's version v. Each read reports false
// (nil for take) when the bytes left do not hold it.
type ccacheReader struct {
	b []byte
	p int
	v byte
	e binary.ByteOrder
}

// take reads the next n bytes.
func (r *ccacheReader) take(n int) []byte {
	if n < 0 || r.p < 0 || n > len(r.b)-r.p {
		return nil
	}
	r.p += n
	return r.b[r.p-n : r.p]
}

// u16 reads a 2-byte signed number.
func (r *ccacheReader) u16() (int, bool) {
	x := r.take(2)
	if x == nil {
		return 0, false
	}
	return int(int16(r.e.Uint16(x))), true
}

// i32 reads a 4-byte signed number.
func (r *ccacheReader) i32() (int, bool) {
	x := r.take(4)
	if x == nil {
		return 0, false
	}
	return int(int32(r.e.Uint32(x))), true
}

// data reads a 4-byte length and that many bytes.
func (r *ccacheReader) data() bool {
	n, ok := r.i32()
	return ok && r.take(n) != nil
}

// principal reads a principal: its name type (but in version 1), its
// component count, its realm and its components.
func (r *ccacheReader) principal() bool {
	if r.v != 1 {
		if _, ok := r.i32(); !ok {
			return false
		}
	}
	nc, ok := r.i32()
	if r.v == 1 {
		nc--
	}
	if !ok || !r.data() {
		return false
	}
	for range max(nc, 0) {
		if !r.data() {
			return false
		}
	}
	return true
}

// header reads a version 4 file's header: its length, then tag-length-value
// fields, of which gokrb5 accepts only the 8-byte time offset (tag 1).
func (r *ccacheReader) header() bool {
	hl, ok := r.u16()
	hl = int(uint16(hl))
	for ok && r.p <= hl {
		tag, ok1 := r.u16()
		n, ok2 := r.u16()
		if !ok1 || !ok2 || r.take(int(uint16(n))) == nil || tag != 1 || n != 8 {
			return false // gokrb5 refuses the header itself
		}
	}
	return ok
}

// credential reads one credential; readable is false when the bytes left do
// not hold it (gokrb5 then reports the file), err errCCacheCounts when its
// address or authdata count exceeds them.
func (r *ccacheReader) credential() (readable bool, err error) {
	//lint:ignore SA4000 each call reads the next principal from b: the client's, then the server's
	if !r.principal() || !r.principal() {
		return false, nil
	}
	if _, ok := r.u16(); !ok {
		return false, nil
	}
	if r.v == 3 {
		if _, ok := r.u16(); !ok {
			return false, nil
		}
	}
	if !r.data() || r.take(4*4+1+4) == nil {
		return false, nil
	}
	for range 2 { // addresses, then authdata: a 2-byte type and data each
		n, ok := r.i32()
		if !ok || n < 0 {
			return false, nil
		}
		if n > (len(r.b)-r.p)/6 {
			return false, errCCacheCounts
		}
		for range n {
			if _, ok := r.u16(); !ok || !r.data() {
				return false, nil
			}
		}
	}
	//lint:ignore SA4000 each call reads the next field from b: the ticket, then the second ticket
	if !r.data() || !r.data() {
		return false, nil
	}
	return true, nil
}
