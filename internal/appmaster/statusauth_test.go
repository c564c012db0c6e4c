package appmaster

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/reqsign"
)

// TestStatusRequestsSignedFreshOnce: the AM's StatusPath answers a request
// signed with the status key once, within the clock window, and signs its
// answer over that request; a replayed, stale, forged or altered request
// gets 401 and no report.
func TestStatusRequestsSignedFreshOnce(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	g := newWebGate("alice", WebAccess{StatusKey: key, AnonymousUser: "dr.who"}, testViews(), t.Logf)
	srv := httptest.NewServer(g)
	defer srv.Close()
	send := func(h http.Header, target string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+target, nil)
		require.NoError(t, err)
		for k, v := range h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(b)
	}
	sign := func(signKey []byte, target string, at time.Time, body []byte) (http.Header, string) {
		r, err := reqsign.NewRequest(contract.StatusRequestPurpose, http.MethodGet, target, "application_1_0001", at)
		require.NoError(t, err)
		h := http.Header{}
		return h, r.Sign(signKey, body, h)
	}
	signing := contract.StatusSigningKey(key)

	h, sig := sign(signing, contract.StatusPath, time.Now(), nil)
	resp, body := send(h, contract.StatusPath)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, `{"app_id":"x"}`, body)
	require.NoError(t, reqsign.CheckResponse(signing, contract.StatusAnswerPurpose, sig, resp.StatusCode, resp.Header, []byte(body)))
	other, otherSig := sign(signing, contract.StatusPath, time.Now(), nil)
	require.Error(t, reqsign.CheckResponse(signing, contract.StatusAnswerPurpose, otherSig, resp.StatusCode, resp.Header, []byte(body)),
		"an answer counts for its own request only")

	resp, body = send(h, contract.StatusPath)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "replayed")
	require.Contains(t, body, "replayed request")
	require.NotContains(t, body, "app_id")

	resp, _ = send(other, contract.StatusPath)
	require.Equal(t, http.StatusOK, resp.StatusCode, "a fresh nonce is heard")

	for name, tc := range map[string]struct {
		h      http.Header
		target string
		why    string
	}{
		"stale":                 {h: first(sign(signing, contract.StatusPath, time.Now().Add(-6*time.Minute), nil)), target: contract.StatusPath, why: "timestamp off"},
		"early":                 {h: first(sign(signing, contract.StatusPath, time.Now().Add(6*time.Minute), nil)), target: contract.StatusPath, why: "timestamp off"},
		"the status key itself": {h: first(sign(key, contract.StatusPath, time.Now(), nil)), target: contract.StatusPath, why: "bad signature"},
		"another job's key": {h: first(sign(contract.StatusSigningKey([]byte("another job's key, just as long")), contract.StatusPath, time.Now(), nil)),
			target: contract.StatusPath, why: "bad signature"},
		"signed for another target": {h: first(sign(signing, "/status?all=1", time.Now(), nil)), target: contract.StatusPath, why: "bad signature"},
		"a body signed":             {h: first(sign(signing, contract.StatusPath, time.Now(), []byte("x"))), target: contract.StatusPath, why: "body does not match"},
		"unsigned":                  {h: http.Header{}, target: contract.StatusPath, why: "unsigned request"},
	} {
		resp, body := send(tc.h, tc.target)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, name)
		require.Contains(t, body, tc.why, name)
		require.Contains(t, body, "tfyarn status as the job's owner", name)
		require.NotContains(t, body, "app_id", name)
		require.Empty(t, resp.Header.Get(reqsign.HeaderSignature), "%s: a refusal is not signed", name)
	}
}

func first(h http.Header, _ string) http.Header { return h }

// TestPublicReportHidesTheOwnersDetails: the public view keeps states,
// counts, times and samples, and drops the command line, the diagnostics,
// restart causes and waiting lines, and every task's address, container,
// node, log link and failure.
func TestPublicReportHidesTheOwnersDetails(t *testing.T) {
	code := int32(3)
	now := time.Now().UTC()
	full := contract.StatusReport{
		AppID: "application_1_0001", Final: true, FinalStatus: "FAILED", Counts: contract.TaskCounts{Total: 1, Ended: 1},
		Diagnostics: "worker:0 failed; last stderr of worker:0: SECRET-STDERR", Restarts: 1,
		RestartCauses: []string{"worker:0 (container SECRET-CONTAINER) failed: SECRET-STDERR"}, Waiting: []string{"SECRET-WAIT"},
		User: "alice", TensorBoardURL: "http://SECRET-HOST:6006/", StartedAt: &now,
		Job: &contract.JobInfo{Name: "train", Queue: "ml", Command: "python SECRET-COMMAND", Groups: []contract.GroupInfo{{Type: "worker", Spec: "1c,256m"}}},
		Tasks: []contract.TaskReport{{
			Task: "worker:0", Type: "worker", State: "failed", Attempt: 1, Restarts: 1, ExitCode: &code,
			Host: "SECRET-HOST", Port: 2222, ContainerID: "SECRET-CONTAINER", Node: "SECRET-NODE:8041", NodeHTTP: "SECRET-NODE:8042",
			LogsURL: "http://SECRET-NODE:8042/node/containerlogs/SECRET-CONTAINER/alice", Failure: "SECRET-STDERR",
			StartedAt: &now, MemoryLimitBytes: 256 << 20, ProcessSample: &contract.ProcessSample{CPUPercent: 50, RSSBytes: 1 << 20},
		}},
	}
	pub := publicReport(full)
	b, err := json.Marshal(pub)
	require.NoError(t, err)
	require.NotContains(t, string(b), "SECRET")
	require.Equal(t, "FAILED", pub.FinalStatus)
	require.Equal(t, "train", pub.Job.Name)
	require.Equal(t, []contract.GroupInfo{{Type: "worker", Spec: "1c,256m"}}, pub.Job.Groups)
	require.Equal(t, "failed", pub.Tasks[0].State)
	require.Equal(t, int32(3), *pub.Tasks[0].ExitCode)
	require.Equal(t, 50.0, pub.Tasks[0].CPUPercent)
	require.Equal(t, full.Counts, pub.Counts)
}
