package mlflow

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/jobreport"
)

// The real tracking server is the e2e tests' (cmd/tfyarn/mlflow_e2e_test.go); this fake
// serves the faults it cannot be made to produce: oversized and garbled answers, a server
// that never answers, exact request shapes.

func fakeServer(t *testing.T, h http.HandlerFunc) *Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := New(Config{TrackingURI: srv.URL, CallTimeout: 2 * time.Second})
	require.NoError(t, err)
	return c
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	_, err := ConfigFromEnv(env(nil))
	require.ErrorIs(t, err, ErrNoTrackingURI)
	for _, bad := range []string{"file:///tmp/mlruns", "databricks", "http://", "sqlite:///x.db"} {
		_, err := ConfigFromEnv(env(map[string]string{EnvTrackingURI: bad}))
		require.ErrorContains(t, err, "not an http(s) URL", bad)
	}
	_, err = ConfigFromEnv(env(map[string]string{EnvTrackingURI: "http://u:secretpw@h:5000"}))
	require.ErrorContains(t, err, "holds credentials")
	require.NotContains(t, err.Error(), "secretpw")
	cfg, err := ConfigFromEnv(env(map[string]string{EnvTrackingURI: "https://h:5000/", EnvToken: "tok", EnvInsecureTLS: "True"}))
	require.NoError(t, err)
	require.Equal(t, "https://h:5000", cfg.TrackingURI)
	require.Equal(t, "tok", cfg.Token)
	require.True(t, cfg.InsecureTLS)
}

func TestNewRefusesUnusableCertificates(t *testing.T) {
	_, err := New(Config{TrackingURI: "https://h", ServerCertPath: "/nonexistent/ca.pem"})
	require.ErrorContains(t, err, EnvServerCert)
	empty := t.TempDir() + "/ca.pem"
	require.NoError(t, writeFile(empty, "not a certificate"))
	_, err = New(Config{TrackingURI: "https://h", ServerCertPath: empty})
	require.ErrorContains(t, err, "holds no PEM certificate")
	_, err = New(Config{TrackingURI: "https://h", ClientCertPath: empty})
	require.ErrorContains(t, err, EnvClientCert)
}

func TestAuthentication(t *testing.T) {
	var got []string
	var mu sync.Mutex
	h := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Authorization"))
		mu.Unlock()
		_, _ = io.WriteString(w, `{}`)
	}
	srv := httptest.NewServer(http.HandlerFunc(h))
	defer srv.Close()
	for _, cfg := range []Config{{Token: "tok"}, {Username: "alice", Password: "pw", Token: "tok"}, {}} {
		cfg.TrackingURI = srv.URL
		c, err := New(cfg)
		require.NoError(t, err)
		require.NoError(t, c.SetTerminated(context.Background(), "r", StatusFinished, time.Now()))
	}
	require.Equal(t, []string{"Bearer tok", "Basic YWxpY2U6cHc=", ""}, got)
}

func TestServerRefusalIsAnAPIError(t *testing.T) {
	c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"error_code": "PERMISSION_DENIED", "message": "no access to experiment 7"}`)
	})
	_, err := c.GetRun(context.Background(), "abc")
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	require.Equal(t, 403, ae.Status)
	require.True(t, IsCode(err, "PERMISSION_DENIED"))
	require.EqualError(t, err, "mlflow: GET /api/2.0/mlflow/runs/get: HTTP 403 PERMISSION_DENIED: no access to experiment 7")

	c = fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "<html>bad gateway</html>")
	})
	_, err = c.GetRun(context.Background(), "abc")
	require.ErrorContains(t, err, "HTTP 502: <html>bad gateway</html>")
}

func TestAnswersAreBounded(t *testing.T) {
	c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"run": {"info": {"run_id": "`+strings.Repeat("x", maxResponseBytes)+`"}}}`)
	})
	_, err := c.GetRun(context.Background(), "abc")
	require.ErrorContains(t, err, "the answer is over 4194304 bytes")

	c = fakeServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, `{"run": [`) })
	_, err = c.GetRun(context.Background(), "abc")
	require.ErrorContains(t, err, "decoding the answer")
}

func TestEveryCallHasADeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	c, err := New(Config{TrackingURI: srv.URL, CallTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	start := time.Now()
	_, err = c.ExperimentID(context.Background(), "e")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 5*time.Second)
}

func TestServerDownWrapsTheCause(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c, err := New(Config{TrackingURI: url})
	require.NoError(t, err)
	_, err = c.CreateRun(context.Background(), "1", "r", nil)
	require.ErrorContains(t, err, "connection refused")
	var op interface{ Timeout() bool }
	require.True(t, errors.As(err, &op), "the cause is kept: %v", err)
}

func TestExperimentIsCreatedWhenMissing(t *testing.T) {
	var calls []string
	c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		calls = append(calls, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		switch r.URL.Path {
		case api + "/experiments/get-by-name":
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"error_code": "RESOURCE_DOES_NOT_EXIST", "message": "no such experiment"}`)
		case api + "/experiments/create":
			var req map[string]string
			require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
			require.Equal(t, "my exp", req["name"])
			_, _ = io.WriteString(w, `{"experiment_id": "42"}`)
		}
	})
	id, err := c.ExperimentID(context.Background(), "my exp")
	require.NoError(t, err)
	require.Equal(t, "42", id)
	require.Equal(t, []string{"GET /api/2.0/mlflow/experiments/get-by-name?experiment_name=my+exp", "POST /api/2.0/mlflow/experiments/create?"}, calls)
}

// TestLogBatchSplitsAtMLflowsLimits: 250 params, 120 tags and 1500 metrics go in calls of at
// most 100 params, 100 tags and 1000 entities; long values are clipped.
func TestLogBatchSplitsAtMLflowsLimits(t *testing.T) {
	type batch struct {
		Params, Tags []keyValue
		Metrics      []Metric
	}
	var got []batch
	c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		var b batch
		require.NoError(t, json.NewDecoder(r.Body).Decode(&b))
		got = append(got, b)
		_, _ = io.WriteString(w, `{}`)
	})
	params, tags := map[string]string{}, map[string]string{}
	for i := range 250 {
		params["p"+strconv.Itoa(i)] = "v"
	}
	for i := range 120 {
		tags["t"+strconv.Itoa(i)] = strings.Repeat("é", 5000)
	}
	metrics := make([]Metric, 1500)
	require.NoError(t, c.LogBatch(context.Background(), "r", params, tags, metrics))
	np, nt, nm := 0, 0, 0
	for _, b := range got {
		require.LessOrEqual(t, len(b.Params), batchParams)
		require.LessOrEqual(t, len(b.Tags), batchTags)
		require.LessOrEqual(t, len(b.Params)+len(b.Tags)+len(b.Metrics), batchMetrics)
		for _, tag := range b.Tags {
			require.LessOrEqual(t, len(tag.Value), maxTagValLen)
			require.True(t, strings.HasSuffix(tag.Value, "é..."), "clipped on a character boundary")
		}
		np, nt, nm = np+len(b.Params), nt+len(b.Tags), nm+len(b.Metrics)
	}
	require.Equal(t, []int{250, 120, 1500}, []int{np, nt, nm})
	require.Len(t, got, 3)
}

func TestUploadArtifactThroughTheProxy(t *testing.T) {
	var path, body string
	c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.EscapedPath()
		b, _ := io.ReadAll(r.Body)
		body = string(b)
		_, _ = io.WriteString(w, `{}`)
	})
	run := Run{ArtifactURI: "mlflow-artifacts:/3/abc/artifacts"}
	require.NoError(t, c.UploadArtifact(context.Background(), run, "tfyarn/a b.json", []byte("data")))
	require.Equal(t, "/api/2.0/mlflow-artifacts/artifacts/3/abc/artifacts/tfyarn/a%20b.json", path)
	require.Equal(t, "data", body)

	run.ArtifactURI = "mlflow-artifacts://h:5000/3/abc/artifacts"
	require.NoError(t, c.UploadArtifact(context.Background(), run, "x", nil))
	require.Equal(t, "/api/2.0/mlflow-artifacts/artifacts/3/abc/artifacts/x", path)

	for _, name := range []string{"../x", "/etc/x", "a/../../x", ""} {
		require.ErrorContains(t, c.UploadArtifact(context.Background(), run, name, nil), "not a clean relative path", name)
	}
	run.ArtifactURI = "s3://bucket/3/abc/artifacts"
	require.ErrorContains(t, c.UploadArtifact(context.Background(), run, "x", nil), "--serve-artifacts")
	require.ErrorContains(t, c.UploadArtifact(context.Background(), Run{ArtifactURI: "mlflow-artifacts:/1"}, "x", make([]byte, MaxArtifactBytes+1)), "over the")
}

func TestEndMetricsAndStatus(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) *time.Time { v := t0.Add(time.Duration(s) * time.Second); return &v }
	r := jobreport.Report{StartedAt: at(0), EndedAt: at(30), Restarts: 1, Tasks: []jobreport.Task{
		{Task: "chief:0", StartedAt: at(4), ProcessSample: &jobreport.ProcessSample{PeakRSSBytes: 64 << 20, CPUSeconds: 2.5},
			GPUs: []jobreport.GPUSample{{Index: 0, UtilizationPct: 80}}},
		{Task: "worker:0", StartedAt: at(6)},
	}}
	got := map[string]float64{}
	for _, m := range EndMetrics(r, t0.Add(time.Hour)) {
		got[m.Key] = m.Value
	}
	require.Equal(t, map[string]float64{
		"tfyarn.wall_seconds": 30, "tfyarn.all_tasks_running_seconds": 6, "tfyarn.restarts": 1,
		"tfyarn.chief_0.peak_rss_mib": 64, "tfyarn.chief_0.cpu_seconds": 2.5, "tfyarn.chief_0.gpu0_utilization_pct": 80,
	}, got)
	require.Equal(t, StatusFinished, EndStatus("SUCCEEDED"))
	require.Equal(t, StatusKilled, EndStatus("KILLED"))
	require.Equal(t, StatusFailed, EndStatus("FAILED"))
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }

// TestLogEndLeavesAJoinedRunsStatus: LogEnd ends a run tfyarn created (runs/update first) and only
// logs the end (tags, metrics) into a joined one, whose status is its owner's.
func TestLogEndLeavesAJoinedRunsStatus(t *testing.T) {
	for _, endRun := range []bool{true, false} {
		var paths []string
		var mu sync.Mutex
		c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			paths = append(paths, r.URL.Path)
			mu.Unlock()
			_, _ = io.WriteString(w, `{}`)
		})
		require.NoError(t, c.LogEnd(context.Background(), "r", jobreport.Report{FinalStatus: "SUCCEEDED"}, nil, endRun))
		want := []string{"/api/2.0/mlflow/runs/log-batch"}
		if endRun {
			want = append([]string{"/api/2.0/mlflow/runs/update"}, want...)
		}
		require.Equal(t, want, paths, "endRun %v", endRun)
	}
}
