package webui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
)

func TestPage(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	later := start.Add(65 * time.Second)
	code := int32(0)
	rep := contract.StatusReport{
		AppID: "application_1_0007", User: "alice", Restarts: 2, StartedAt: &start,
		Job: &contract.JobInfo{Name: "mnist", Queue: "ml-gpu", NodeLabel: "gpu", Command: "python train.py --epochs 3",
			Groups: []contract.GroupInfo{{Type: "chief", Spec: "1c,1g"}, {Type: "worker", Spec: "2x1c,1g", NodeLabel: "gpu"}},
			Spread: "no two worker tasks on one node (--spread worker)", Affinity: "no ps task on a node running a worker task (--apart ps=worker)"},
		TensorBoardURL: "http://node1:6006/",
		Waiting:        []string{`worker:2 waiting for a container (1 vcores, 256 MiB, label "") since 03:04:05 UTC, past --alloc-timeout 5m0s; the job goes on without it (--min-workers 2) and keeps asking`},
		Diagnostics:    "worker:1 <failed> & more",
		Warnings:       []string{"GPUs idle for 15m0s (0 % utilisation): the job fails at --gpu-idle-timeout 30m0s unless they work"},
		ExcludedNodes:  []contract.ExcludedNode{{Host: "nm1.example", Reason: "2 task attempts failed there (--max-node-failures 2)"}},
		Tasks: []contract.TaskReport{
			{Task: "chief:0", Type: "chief", State: "succeeded", Host: "node1", Port: 2222, ContainerID: "container_1_0007_01_000002",
				Node: "node1:4545", ExitCode: &code, Attempt: 1, Restarts: 1, StartedAt: &start, EndedAt: &later,
				LogsURL:       "http://node1:8042/node/containerlogs/container_1_0007_01_000002/alice",
				GPUs:          []contract.GPUSample{{Index: 0, UtilizationPct: 87, MemoryUsedMiB: 61234, MemoryTotalMiB: 81559}},
				ProcessSample: &contract.ProcessSample{CPUPercent: 187.4, RSSBytes: 1288490189, PeakRSSBytes: 1610612736}, MemoryLimitBytes: 2 << 30},
			{Task: "worker:0", Type: "worker", State: "pending"},
			{Task: "worker:1", Type: "worker", State: "running",
				ProcessSample: &contract.ProcessSample{CPUPercent: 3, RSSBytes: 240 << 20, PeakRSSBytes: 245 << 20}, MemoryLimitBytes: 256 << 20, NearMemoryLimit: true},
		},
	}
	srv := httptest.NewServer(Handler(func() contract.StatusReport { return rep }, func() time.Time { return later }, false))
	defer srv.Close()
	body := fetch(t, srv.URL+"/", http.StatusOK)
	for _, want := range []string{
		`data-task="chief:0" data-state="succeeded"`, "node1:2222", "container_1_0007_01_000002", "node1:4545",
		`<td class="restarts">1</td>`, `<td id="restarts">2</td>`, "<td>2026-01-02 03:04:05Z</td>", `<td class="elapsed">1m05s</td>`, "0: 87% 61234/81559 MiB",
		`<td class="process">187% 1.2 GiB (peak 1.5 GiB)</td>`, `<td class="process">-</td>`,
		`<td class="process near-limit">3% 240 MiB (peak 245 MiB); near its 256 MiB limit</td>`,
		`href="http://node1:8042/node/containerlogs/container_1_0007_01_000002/alice/stdout"`,
		`href="http://node1:6006/"`, "python train.py --epochs 3", "--worker 2x1c,1g (label gpu)", "ml-gpu",
		`href="status"`, `href="static/style.css"`, `src="static/app.js"`,
		"worker:1 &lt;failed&gt; &amp; more", // escaped, never markup
		`<td id="waiting"><div class="waiting">worker:2 waiting for a container (1 vcores, 256 MiB, label &#34;&#34;) since 03:04:05 UTC, past --alloc-timeout 5m0s; the job goes on without it (--min-workers 2) and keeps asking</div></td>`,
		`<td id="warnings"><div class="warning">GPUs idle for 15m0s (0 % utilisation): the job fails at --gpu-idle-timeout 30m0s unless they work</div></td>`,
		`<td id="excluded"><div class="excluded">nm1.example: 2 task attempts failed there (--max-node-failures 2)</div></td>`,
		`<td id="spread">no two worker tasks on one node (--spread worker); no ps task on a node running a worker task (--apart ps=worker)</td>`,
	} {
		require.Contains(t, body, want)
	}
	require.NotContains(t, body, `="/`, "every link is relative: the proxy serves us under /proxy/<app>/")
	require.NotContains(t, body, "https://", "no CDN")
	require.Contains(t, fetch(t, srv.URL+"/static/app.js", http.StatusOK), "DOMParser")
	require.Contains(t, fetch(t, srv.URL+"/static/style.css", http.StatusOK), "table")
	fetch(t, srv.URL+"/nope", http.StatusNotFound)

	// Decided: the final status, a failed task's line, no more refreshing.
	one := int32(1)
	rep.Final, rep.FinalStatus = true, "FAILED"
	rep.Tasks[1] = contract.TaskReport{Task: "worker:0", Type: "worker", State: "failed", ExitCode: &one,
		Failure: "worker:0 (container container_1_0007_01_000003 on node1:4545) failed: exit code 1"}
	body = fetch(t, srv.URL+"/", http.StatusOK)
	require.Contains(t, body, `<main id="live" data-final="true">`)
	require.Contains(t, body, `<span id="final-status" class="status FAILED">FAILED</span>`)
	require.Contains(t, body, `<td class="exit">1</td>`)
	require.Contains(t, body, `<tr class="failure"><td></td><td colspan="10">worker:0 (container container_1_0007_01_000003 on node1:4545) failed: exit code 1</td></tr>`)
}

// TestPublicPage: the page of the job's public view says it is one and has
// no command row.
func TestPublicPage(t *testing.T) {
	rep := contract.StatusReport{AppID: "application_1_0007", User: "alice", Job: &contract.JobInfo{Name: "mnist"},
		Tasks: []contract.TaskReport{{Task: "worker:0", Type: "worker", State: "running"}}}
	srv := httptest.NewServer(Handler(func() contract.StatusReport { return rep }, nil, true))
	defer srv.Close()
	body := fetch(t, srv.URL+"/", http.StatusOK)
	require.Contains(t, body, `<p id="public-view">This is the job's public view.`)
	require.NotContains(t, body, `id="command"`)
	require.Contains(t, body, `data-task="worker:0" data-state="running"`)
	owner := httptest.NewServer(Handler(func() contract.StatusReport { return rep }, nil, false))
	defer owner.Close()
	body = fetch(t, owner.URL+"/", http.StatusOK)
	require.NotContains(t, body, "public-view")
	require.Contains(t, body, `id="command"`)
}

func fetch(t *testing.T, url string, status int) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, status, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}
