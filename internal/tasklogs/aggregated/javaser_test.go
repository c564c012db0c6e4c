package aggregated

import (
	"bytes"
	"testing"
)

// An annotation's blocks of data come back in order, whether their length
// is one byte (TC_BLOCKDATA) or four (TC_BLOCKDATALONG); a length past the
// input or a negative one is an error, not a panic.
func TestAnnotationBlockData(t *testing.T) {
	r := &jreader{b: []byte{tcBlockData, 2, 'a', 'b', tcBlockDataLong, 0, 0, 0, 3, 'x', 'y', 'z', tcEndBlockData}}
	got, err := r.annotation()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !bytes.Equal(got[0].([]byte), []byte("ab")) || !bytes.Equal(got[1].([]byte), []byte("xyz")) {
		t.Fatalf("blocks %q, want ab and xyz", got)
	}
	for _, bad := range [][]byte{
		{tcBlockData, 5, 'a', tcEndBlockData},
		{tcBlockDataLong, 0xff, 0xff, 0xff, 0xfe, tcEndBlockData},
		{tcBlockDataLong, 0, 0},
	} {
		if _, err := (&jreader{b: bad}).annotation(); err == nil {
			t.Errorf("% x: no error", bad)
		}
	}
}
