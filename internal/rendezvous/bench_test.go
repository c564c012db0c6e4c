package rendezvous

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tfyarn/tfyarn/taskspec"
)

// The cost of the signed, sealed, bound calls (bench/results/am-flood.md):
// one launcher call over loopback, beside the same HTTP round trip with
// no signature, no sealing and no binding (the baseline).
//
//	go test -run '^$' -bench . -benchtime 2000x ./internal/rendezvous/
func BenchmarkCall(b *testing.B) {
	secret := testSecret(b)
	board := newBoard(b, 0, group(taskspec.Worker, 1))
	srv := startServer(b, secret, board)
	r := reg(taskspec.Worker, 0, 2222)
	board.Assign(r.Task, r.ContainerID)
	c := newTestClient(b, srv.addr, secret, r.ContainerID)
	ctx := context.Background()
	if err := c.Register(ctx, r); err != nil {
		b.Fatal(err)
	}
	exit := ExitReport{Task: r.Task, ContainerID: r.ContainerID, ExitCode: 1, StderrTail: stderrLines(20)}

	b.Run("signed/register", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := c.Register(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("signed/exit-20-lines", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := c.ReportExit(ctx, exit); err != nil {
				b.Fatal(err)
			}
		}
	})

	// Baseline: the same bodies as plain JSON over the same kind of
	// server and client, read and answered without any check.
	plain := startPlainServer(b)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.Cleanup(hc.CloseIdleConnections)
	for name, body := range map[string][]byte{"register": encodeRegistration(r), "exit-20-lines": encodeExit(exit)} {
		b.Run("plain/"+name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				resp, err := hc.Post("http://"+plain+PathPrefix+name, "application/json", strings.NewReader(string(body)))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// BenchmarkServerChecks is the server's own work on one signed call:
// the header check, the replay cache, reading and opening the body.
func BenchmarkServerChecks(b *testing.B) {
	secret := testSecret(b)
	srv, err := NewServer(secret, newBoard(b, 0, group(taskspec.Worker, 1)))
	if err != nil {
		b.Fatal(err)
	}
	r := reg(taskspec.Worker, 0, 2222)
	body := encodeExit(ExitReport{Task: r.Task, ContainerID: r.ContainerID, ExitCode: 1, StderrTail: stderrLines(20)})
	reqs := make([]*testReq, b.N)
	for i := range reqs {
		reqs[i] = signedRequest(b, secret, http.MethodPost, "http://am"+PathPrefix+"exit", body)
		reqs[i].RequestURI = reqs[i].URL.RequestURI()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := srv.authenticate(reqs[i].Request)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := srv.readBody(nil, reqs[i].Request, c); err != nil {
			b.Fatal(err)
		}
	}
}

func stderrLines(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat("Traceback line ", 5)
	}
	return out
}

// startPlainServer answers every POST with "{}" after reading its body.
func startPlainServer(b *testing.B) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	})}
	go func() { _ = hs.Serve(ln) }()
	b.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String()
}

// BenchmarkRefuseStranger is what a request with a forged signature and a
// 60 KiB body costs the server: its headers are checked, the body is not
// read.
func BenchmarkRefuseStranger(b *testing.B) {
	secret := testSecret(b)
	srv, err := NewServer(secret, newBoard(b, 0, group(taskspec.Worker, 1)))
	if err != nil {
		b.Fatal(err)
	}
	body := strings.Repeat("x", 60<<10)
	for i := 0; i < b.N; i++ {
		req := signedRequest(b, testSecret(b), http.MethodPost, "http://am"+PathPrefix+"register", nil).Request
		req.Body = io.NopCloser(strings.NewReader(body))
		req.ContentLength = int64(len(body))
		req.RequestURI = req.URL.RequestURI()
		w := httptest.NewRecorder()
		b.StartTimer()
		srv.ServeHTTP(w, req)
		b.StopTimer()
		if w.Code != http.StatusUnauthorized {
			b.Fatalf("status %d", w.Code)
		}
	}
}
