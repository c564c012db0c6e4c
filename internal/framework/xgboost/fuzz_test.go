package xgboost

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/tfyarn/tfyarn/internal/framework"
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

// Whatever a hello's task_id, the tracker hears exactly the job's workers:
// a task_id is accepted only when it is some worker's "worker:N:TOKEN",
// and then as that worker.
func FuzzWorkerOf(f *testing.F) {
	f.Add(proof(0))
	f.Add(proof(2))
	f.Add("worker:1:" + strings.Repeat("0", framework.JobServiceTokenLen))
	f.Add("worker:-1:")
	f.Add("worker:99999999999999999999:x")
	f.Add("")
	tr := Tracker{Workers: 3, Key: testKey}
	f.Fuzz(func(t *testing.T, taskID string) {
		index, err := tr.workerOf(taskID)
		if err != nil {
			return
		}
		if taskID != proof(index) || index < 0 || index >= tr.Workers {
			t.Fatalf("%q accepted as worker:%d", taskID, index)
		}
	})
}
