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
	v := b[1]
	var e binary.ByteOrder = binary.BigEndian
	if v <= 2 {
		e = binary.NativeEndian // gokrb5: native order for versions 1 and 2
	}
	p := 2
	take := func(n int) []byte {
		if n < 0 || p < 0 || n > len(b)-p {
			return nil
		}
		p += n
		return b[p-n : p]
	}
	u16 := func() (int, bool) {
		x := take(2)
		if x == nil {
			return 0, false
		}
		return int(int16(e.Uint16(x))), true
	}
	i32 := func() (int, bool) {
		x := take(4)
		if x == nil {
			return 0, false
		}
		return int(int32(e.Uint32(x))), true
	}
	data := func() bool {
		n, ok := i32()
		return ok && take(n) != nil
	}
	principal := func() bool {
		if v != 1 {
			if _, ok := i32(); !ok {
				return false
			}
		}
		nc, ok := i32()
		if v == 1 {
			nc--
		}
		if !ok || !data() {
			return false
		}
		for range max(nc, 0) {
			if !data() {
				return false
			}
		}
		return true
	}
	if v == 4 {
		hl, ok := u16()
		hl = int(uint16(hl))
		for ok && p <= hl {
			tag, ok1 := u16()
			n, ok2 := u16()
			if !ok1 || !ok2 || take(int(uint16(n))) == nil || tag != 1 || n != 8 {
				return nil // gokrb5 refuses the header itself
			}
		}
		if !ok {
			return nil
		}
	}
	if !principal() {
		return nil
	}
	for p < len(b) {
		//lint:ignore SA4000 each call reads the next principal from b: the client's, then the server's
		if !principal() || !principal() {
			return nil
		}
		if _, ok := u16(); !ok {
			return nil
		}
		if v == 3 {
			if _, ok := u16(); !ok {
				return nil
			}
		}
		if !data() || take(4*4+1+4) == nil {
			return nil
		}
		for range 2 { // addresses, then authdata: a 2-byte type and data each
			n, ok := i32()
			if !ok || n < 0 {
				return nil
			}
			if n > (len(b)-p)/6 {
				return errCCacheCounts
			}
			for range n {
				if _, ok := u16(); !ok || !data() {
					return nil
				}
			}
		}
		//lint:ignore SA4000 each call reads the next field from b: the ticket, then the second ticket
		if !data() || !data() {
			return nil
		}
	}
	return nil
}
