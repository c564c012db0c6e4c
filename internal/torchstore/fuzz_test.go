package torchstore

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzReadRequest: any bytes decode to requests or an error, never a panic
// nor an allocation past the bounds; what decodes encodes back the same.
func FuzzReadRequest(f *testing.F) {
	f.Add(Request{Cmd: CmdValidate, Int: int64(ValidationMagic)}.Encode())
	f.Add(set("key", "value").Encode())
	f.Add(Request{Cmd: CmdMultiSet, Keys: []string{"a", "b"}, Values: [][]byte{[]byte("1"), []byte("2")}}.Encode())
	f.Add(Request{Cmd: CmdCompareSet, Keys: []string{"k"}, Values: [][]byte{nil, []byte("n")}}.Encode())
	f.Add(Request{Cmd: CmdWait, Keys: []string{"a", "b"}}.Encode())
	f.Add([]byte{byte(CmdGet), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for i := 0; i < 64; i++ {
			q, err := ReadRequest(r, nil)
			if err != nil {
				return
			}
			for _, k := range q.Keys {
				if len(k) > MaxKeyLen {
					t.Fatalf("key of %d bytes", len(k))
				}
			}
			for _, v := range q.Values {
				if len(v) > MaxValueLen {
					t.Fatalf("value of %d bytes", len(v))
				}
			}
			again, err := ReadRequest(bufio.NewReader(bytes.NewReader(q.Encode())), nil)
			if err != nil {
				t.Fatalf("re-encoding %+v: %v", q, err)
			}
			if again.Cmd != q.Cmd || len(again.Keys) != len(q.Keys) || len(again.Values) != len(q.Values) {
				t.Fatalf("round trip: %+v became %+v", q, again)
			}
		}
	})
}
