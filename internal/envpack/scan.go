package envpack

import "bytes"

// binarySniff is how far into a file a NUL byte makes it binary (git's rule).
const binarySniff = 8000

// prefixScanner watches the bytes of one file go by and records whether any
// prefix occurs in them (across write boundaries) and whether the file looks
// binary. It costs one pass over data already being read for the archive.
type prefixScanner struct {
	prefixes [][]byte
	keep     int    // longest prefix − 1: bytes carried over between writes
	tail     []byte // last keep bytes seen
	seen     int64
	found    bool
	binary   bool
}

func newPrefixScanner(prefixes []string) *prefixScanner {
	s := &prefixScanner{}
	for _, p := range prefixes {
		s.prefixes = append(s.prefixes, []byte(p))
		if len(p)-1 > s.keep {
			s.keep = len(p) - 1
		}
	}
	return s
}

func (s *prefixScanner) reset() {
	s.tail, s.seen, s.found, s.binary = s.tail[:0], 0, false, false
}

func (s *prefixScanner) Write(p []byte) (int, error) {
	if s.seen < binarySniff {
		head := p
		if rest := binarySniff - s.seen; int64(len(head)) > rest {
			head = head[:rest]
		}
		if bytes.IndexByte(head, 0) >= 0 {
			s.binary = true
		}
	}
	s.seen += int64(len(p))
	if s.found {
		return len(p), nil
	}
	// Matches that straddle the previous write: search tail+head of p.
	if len(s.tail) > 0 {
		n := min(len(p), s.keep)
		joint := append(append(make([]byte, 0, len(s.tail)+n), s.tail...), p[:n]...)
		if s.contains(joint) {
			s.found = true
			return len(p), nil
		}
	}
	if s.contains(p) {
		s.found = true
		return len(p), nil
	}
	if len(p) >= s.keep {
		s.tail = append(s.tail[:0], p[len(p)-s.keep:]...)
	} else {
		s.tail = append(s.tail, p...)
		if len(s.tail) > s.keep {
			s.tail = s.tail[len(s.tail)-s.keep:]
		}
	}
	return len(p), nil
}

func (s *prefixScanner) contains(b []byte) bool {
	for _, p := range s.prefixes {
		if bytes.Contains(b, p) {
			return true
		}
	}
	return false
}
