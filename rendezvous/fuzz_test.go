package rendezvous

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/tfyarn/tfyarn/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

func FuzzDecodeRegistration(f *testing.F) {
	f.Add(encodeRegistration(reg(taskspec.Worker, 1, 2222)))
	f.Add([]byte(`{"task":"chief","host":"::1","port":65535}`))
	f.Add([]byte(`{"task":"worker:1","host":"h","port":1}{}`))
	f.Add([]byte(`{"task":"worker:-1","host":"","port":0,"pid":-3}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeRegistration(body)
		if err != nil {
			return
		}
		// Whatever decodes must be valid and survive a round trip.
		if err := r.validate(); err != nil {
			t.Fatalf("decoded an invalid registration %+v: %v", r, err)
		}
		again, err := DecodeRegistration(encodeRegistration(r))
		if err != nil || again != r {
			t.Fatalf("round trip: %+v → %+v, %v", r, again, err)
		}
	})
}

func FuzzDecodeExitReport(f *testing.F) {
	f.Add(encodeExit(ExitReport{Task: task(taskspec.PS, 0), ExitCode: 137, StderrTail: []string{"a", "b"}}))
	f.Add([]byte(`{"task":"worker:0","exit_code":1e99}`))
	f.Add([]byte(`{"task":"worker:0","stderr_tail":[1]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		e, err := DecodeExitReport(body)
		if err != nil {
			return
		}
		if len(e.StderrTail) > MaxStderrLines {
			t.Fatalf("%d stderr lines accepted", len(e.StderrTail))
		}
		if _, err := DecodeExitReport(encodeExit(e)); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// countingHandler fails the fuzz run if an unauthenticated request ever
// reaches the AM.
type countingHandler struct{ calls atomic.Int64 }

func (h *countingHandler) Register(context.Context, Registration) error { h.calls.Add(1); return nil }
func (h *countingHandler) Spec(context.Context, taskspec.TaskID) (taskspec.ClusterSpec, error) {
	h.calls.Add(1)
	return taskspec.ClusterSpec{}, nil
}
func (h *countingHandler) WaitStop(context.Context, taskspec.TaskID, string) (StopOrder, error) {
	h.calls.Add(1)
	return StopOrder{}, nil
}
func (h *countingHandler) ReportExit(context.Context, ExitReport) error { h.calls.Add(1); return nil }

func FuzzServerRequest(f *testing.F) {
	secret := bytes.Repeat([]byte{7}, SecretSize)
	h := &countingHandler{}
	srv, err := NewServer(secret, h)
	if err != nil {
		f.Fatal(err)
	}
	f.Add("POST", "register", "1700000000000", "00112233445566778899aabbccddeeff", "00", []byte(`{}`))
	f.Add("GET", "spec?task=worker:0&wait=1", "", "", "", []byte(nil))
	f.Add("POST", "exit", "-1", "zz", "not hex", []byte(`{"task":"ps:0"}`))
	f.Fuzz(func(t *testing.T, method, path, ts, nonce, sig string, body []byte) {
		req, err := http.NewRequest(method, "http://am"+PathPrefix+path, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.RequestURI = req.URL.RequestURI()
		req.Header.Set(HeaderTimestamp, ts)
		req.Header.Set(HeaderNonce, nonce)
		req.Header.Set(HeaderSignature, sig)
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code == http.StatusOK || w.Code == http.StatusNoContent {
			t.Fatalf("unsigned request accepted: %d", w.Code)
		}
		if h.calls.Load() != 0 {
			t.Fatal("unsigned request reached the handler")
		}
	})
}

func FuzzDecodeMetrics(f *testing.F) {
	f.Add(encodeMetrics(MetricsReport{Task: task(taskspec.Worker, 1), ContainerID: "container_1_0001_01_000002",
		GPUs: []contract.GPUSample{{Index: 0, Name: "NVIDIA H100 80GB HBM3", UtilizationPct: 75, MemoryUsedMiB: 1011, MemoryTotalMiB: 81559}}}))
	f.Add([]byte(`{"task":"worker:0","gpus":[{"index":-1}]}`))
	f.Add([]byte(`{"task":"worker:0","gpus":[{"utilization_pct":101}]}`))
	f.Add([]byte(`{"task":"worker:0","gpus":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := DecodeMetrics(body)
		if err != nil {
			return
		}
		if len(m.GPUs) > MaxGPUs {
			t.Fatalf("decoded %d GPUs", len(m.GPUs))
		}
		again, err := DecodeMetrics(encodeMetrics(m))
		if err != nil || again.Task != m.Task || len(again.GPUs) != len(m.GPUs) {
			t.Fatalf("round trip: %+v → %+v, %v", m, again, err)
		}
	})
}
