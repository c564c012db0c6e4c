package xgboost

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// Whatever a client sends, reading its messages neither panics nor holds
// more than maxMessage bytes of one, and a message read is written back the
// same.
func FuzzReadMessage(f *testing.F) {
	msg := func(s string) []byte { return append(binary.LittleEndian.AppendUint32(nil, uint32(len(s))), s...) }
	f.Add(append(msg(`{"world_size":-1,"rank":-1,"task_id":"worker:0"}`), msg(`{"cmd":1,"port":4000,"error_port":4001}`)...))
	f.Add(msg(`{"cmd":4,"msg":"hello"}`))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 'x'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for range 16 {
			m, err := readMessage(r)
			if err != nil {
				return
			}
			if len(m) > maxMessage {
				t.Fatalf("message of %d bytes", len(m))
			}
			var cmd struct {
				Cmd  int    `json:"cmd"`
				Port int    `json:"port"`
				Msg  string `json:"msg"`
			}
			_ = readJSON(bytes.NewReader(msg(string(m))), &cmd)
			var out bytes.Buffer
			if err := writeJSON(&out, cmd); err != nil {
				t.Fatal(err)
			}
			if _, err := readMessage(&out); err != nil {
				t.Fatalf("re-reading %+v: %v", cmd, err)
			}
		}
	})
}
