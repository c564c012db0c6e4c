package rendezvous

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/reqsign"
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
	f.Add([]byte(`{"task":"worker:0","exit_code":2,"no_restart":"bad input\u0000"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		e, err := DecodeExitReport(body)
		if err != nil {
			return
		}
		if len(e.StderrTail) > MaxStderrLines {
			t.Fatalf("%d stderr lines accepted", len(e.StderrTail))
		}
		if len(e.NoRestart) > MaxStderrLineLen || strings.ContainsAny(e.NoRestart, "\n\r\x00") {
			t.Fatalf("no-restart reason %q accepted", e.NoRestart)
		}
		if _, err := DecodeExitReport(encodeExit(e)); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// countingHandler fails the fuzz run if an unauthenticated request ever
// reaches the AM (Authorize included).
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
func (h *countingHandler) Authorize(taskspec.TaskID, string) error      { h.calls.Add(1); return nil }

// FuzzServerRequest: a request without the right signed headers never
// reaches the AM, is never answered with a signature (an on-path attacker
// could pass a signed refusal off as the AM's answer to a launcher), and
// its body is never read.
func FuzzServerRequest(f *testing.F) {
	secret := bytes.Repeat([]byte{7}, SecretSize)
	h := &countingHandler{}
	srv, err := NewServer(secret, h)
	if err != nil {
		f.Fatal(err)
	}
	f.Add("POST", "register", testContainer, "1700000000000", "00112233445566778899aabbccddeeff", reqsign.Digest(nil), "00", []byte(`{}`))
	f.Add("GET", "spec?task=worker:0&wait=1", "", "", "", "", "", []byte(nil))
	f.Add("POST", "exit", "c 1", "-1", "zz", "x", "not hex", []byte(`{"task":"ps:0"}`))
	f.Add("GET", "nope", testContainer, "1", "00112233445566778899aabbccddeeff", reqsign.Digest(nil), reqsign.Digest(nil), []byte(nil))
	f.Fuzz(func(t *testing.T, method, path, container, ts, nonce, digest, sig string, body []byte) {
		req, err := http.NewRequest(method, "http://am"+PathPrefix+path, &unreadable{t: t, r: bytes.NewReader(body)})
		if err != nil {
			return
		}
		req.ContentLength = int64(len(body))
		req.RequestURI = req.URL.RequestURI()
		req.Header.Set(reqsign.HeaderSigner, container)
		req.Header.Set(reqsign.HeaderTimestamp, ts)
		req.Header.Set(reqsign.HeaderNonce, nonce)
		req.Header.Set(reqsign.HeaderContentSHA256, digest)
		req.Header.Set(reqsign.HeaderSignature, sig)
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code == http.StatusOK || w.Code == http.StatusNoContent {
			t.Fatalf("unsigned request accepted: %d", w.Code)
		}
		if w.Header().Get(reqsign.HeaderSignature) != "" {
			t.Fatalf("a refusal of an unsigned request was signed (%d)", w.Code)
		}
		if w.Header().Get("Connection") != "close" {
			t.Fatal("the connection of an unsigned request stays open")
		}
		if h.calls.Load() != 0 {
			t.Fatal("unsigned request reached the handler")
		}
	})
}

// unreadable is a body the server must not read.
type unreadable struct {
	t *testing.T
	r *bytes.Reader
}

func (u *unreadable) Read(p []byte) (int, error) {
	u.t.Fatal("the server read the body of a request whose headers failed")
	return 0, nil
}

// FuzzSignedRequest: correctly signed headers over any body and query.
// Whatever the body, the server answers without panicking; a body that is
// not sealed with the container's key for this very request is refused
// unsigned before the AM sees it; an answer it signs opens for the
// launcher.
func FuzzSignedRequest(f *testing.F) {
	secret := bytes.Repeat([]byte{9}, SecretSize)
	f.Add("register", []byte(`{"task":"worker:0","host":"h","port":1,"container_id":"`+testContainer+`"}`), true)
	f.Add("exit", []byte(`{"task":"worker:0","exit_code":1}`), true)
	f.Add("spec?task=worker:0&wait=1", []byte(nil), true)
	f.Add("metrics", []byte("\x00garbage"), false)
	f.Add("stop?task=worker:0&container=x&wait=1", []byte(nil), false)
	f.Fuzz(func(t *testing.T, path string, body []byte, seal bool) {
		h := &countingHandler{}
		srv, err := NewServer(secret, h)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodPost, "http://am"+PathPrefix+path, nil)
		if err != nil {
			return
		}
		k := testKeys(t, secret, testContainer)
		var plain []byte
		if seal || len(body) == 0 {
			plain = body
		}
		wire, sent, err := k.sign(req, testContainer, plain, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if !seal && len(body) > 0 {
			wire = body // not what was signed
		}
		// What the server sees (httptest.NewRequest would panic on a URI a
		// server never parses, like one with a space).
		in := req.Clone(context.Background())
		in.RequestURI = req.URL.RequestURI()
		in.Body = io.NopCloser(bytes.NewReader(wire))
		in.ContentLength = int64(len(wire))
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, in)
		if _, err := k.checkResponse(sent, w.Code, w.Header(), w.Body.Bytes()); err == nil {
			return // the AM's signed answer, which the launcher can open
		}
		if w.Header().Get(reqsign.HeaderSignature) != "" {
			t.Fatalf("a signed answer (%d) that does not open", w.Code)
		}
		if h.calls.Load() != 0 {
			t.Fatalf("an unsigned answer (%d) to a request the AM saw", w.Code)
		}
	})
}

// FuzzOpen: only what seal made, for the same message, opens.
func FuzzOpen(f *testing.F) {
	k := testKeys(f, bytes.Repeat([]byte{5}, SecretSize), testContainer)
	good, err := k.seal([]byte(`{"version":1}`), "ad")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good, "ad")
	f.Add(good, "other")
	f.Add([]byte{}, "")
	f.Add(make([]byte, sealOverhead), "ad")
	f.Fuzz(func(t *testing.T, sealed []byte, ad string) {
		plain, err := k.open(sealed, ad)
		if err != nil {
			return
		}
		// Only seal's output opens (the seeds were sealed under the same
		// key, perhaps by another fuzzing process): the same text, for the
		// same message.
		if ad != "ad" || string(plain) != `{"version":1}` {
			t.Fatalf("opened a forgery: %q", plain)
		}
	})
}

func FuzzDecodeMetrics(f *testing.F) {
	f.Add(encodeMetrics(MetricsReport{Task: task(taskspec.Worker, 1), ContainerID: "container_1_0001_01_000002",
		GPUs: []contract.GPUSample{{Index: 0, Name: "NVIDIA H100 80GB HBM3", UtilizationPct: 75, MemoryUsedMiB: 1011, MemoryTotalMiB: 81559}}}))
	f.Add([]byte(`{"task":"worker:0","gpus":[{"index":-1}]}`))
	f.Add([]byte(`{"task":"worker:0","gpus":[{"utilization_pct":101}]}`))
	f.Add([]byte(`{"task":"worker:0","gpus":null}`))
	f.Add([]byte(`{"task":"worker:0","gpus":null,"progress":{"fraction":0.12,"step":120,"total":1000}}`))
	f.Add([]byte(`{"task":"worker:0","gpus":null,"progress":{"fraction":1e400}}`))
	f.Add([]byte(`{"task":"worker:0","process":{"cpu_percent":187.5,"cpu_seconds":12.25,"rss_bytes":157286400,"peak_rss_bytes":160000000,"processes":3}}`))
	f.Add([]byte(`{"task":"worker:0","process":{"rss_bytes":-1}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := DecodeMetrics(body)
		if err != nil {
			return
		}
		if len(m.GPUs) > MaxGPUs {
			t.Fatalf("decoded %d GPUs", len(m.GPUs))
		}
		if m.Progress != nil && (m.Progress.Fraction < 0 || m.Progress.Fraction > 1 || m.Progress.Step > m.Progress.Total) {
			t.Fatalf("decoded progress %+v", *m.Progress)
		}
		if p := m.Process; p != nil && (p.RSSBytes < 0 || p.RSSBytes > maxRSSBytes || p.CPUPercent < 0 || p.Processes > maxProcesses) {
			t.Fatalf("decoded %+v", *p)
		}
		again, err := DecodeMetrics(encodeMetrics(m))
		if err != nil || again.Task != m.Task || len(again.GPUs) != len(m.GPUs) || (again.Progress == nil) != (m.Progress == nil) {
			t.Fatalf("round trip: %+v → %+v, %v", m, again, err)
		}
	})
}

func FuzzDecodeResultChunk(f *testing.F) {
	f.Add(encodeResult(ResultChunk{Task: task(taskspec.Worker, 1), ContainerID: "container_1_0001_01_000002", Data: []byte("result"), Last: true}))
	f.Add([]byte(`{"task":"worker:0","too_large":67108865,"last":true}`))
	f.Add([]byte(`{"task":"worker:0","offset":67108863,"data":"eHg="}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := DecodeResultChunk(body)
		if err != nil {
			return
		}
		if len(c.Data) > ResultChunkBytes || c.Offset < 0 || c.Offset+int64(len(c.Data)) > contract.MaxResultBytes {
			t.Fatalf("decoded a chunk out of bounds: offset %d, %d bytes", c.Offset, len(c.Data))
		}
		if c.TooLarge != 0 && (c.TooLarge <= contract.MaxResultBytes || len(c.Data) > 0) {
			t.Fatalf("decoded too-large %d with %d bytes", c.TooLarge, len(c.Data))
		}
		again, err := DecodeResultChunk(encodeResult(c))
		if err != nil || again.Task != c.Task || !bytes.Equal(again.Data, c.Data) || again.Offset != c.Offset {
			t.Fatalf("round trip: %+v → %+v, %v", c, again, err)
		}
	})
}
