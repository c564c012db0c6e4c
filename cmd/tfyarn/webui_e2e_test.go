//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/contract"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// TestE2EWebUIHistoryGPU follows one real job through what users look
// into: the web UI at the tracking URL through the RM's web proxy, in a
// real headless browser (Debian's chromium; the screenshot is kept in
// bench/results/webui.png), the tasks' live-log links, the GPU metrics a
// stand-in nvidia-smi (printing a real H100's output, shipped with --files
// and put on PATH with --setenv) feeds the launchers, and, once the job
// ended, the history record `tfyarn status` shows the task table from.
//
//	go test -tags e2e -run E2EWebUIHistoryGPU ./cmd/tfyarn/
func TestE2EWebUIHistoryGPU(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	chromium, err := exec.LookPath("chromium")
	require.NoError(t, err, "the web UI test needs Debian's chromium (apt-get install chromium; .ci/run installs it)")

	dir := t.TempDir()
	fixture, err := os.ReadFile(filepath.Join(c.Root, "executor", "testdata", "h100-query-gpu.csv"))
	require.NoError(t, err)
	smi := filepath.Join(dir, "nvidia-smi")
	require.NoError(t, os.WriteFile(smi, []byte("#!/bin/sh\ncat <<'EOF'\n"+string(fixture)+"EOF\n"), 0o755))
	release := filepath.Join(dir, "release")

	name := "e2e-webui-" + randomHex(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The tasks go to the gpu-labelled NodeManager: the test cluster's
	// NodeManagers share one JVM, where YARN's web apps share Guice's static
	// filter, so every NodeManager's web port serves the last one's
	// containers (the gpu one); on a real cluster each node serves its own.
	run := exec.CommandContext(ctx, bin, "run", "--name", name, "--worker", "2x1c,256m", "--success", "all",
		"--queue", "ml-gpu", "--node-label", "gpu",
		"--files", smi, "--setenv", "PATH=$PWD:/usr/local/bin:/usr/bin:/bin", "--output", "json", "--",
		"sh", "-c", fmt.Sprintf(`echo "$TFYARN_TASK waits"; while [ ! -e %s ]; do sleep 0.2; done; echo "$TFYARN_TASK done"`, release))
	run.Env = c.Env()
	var runOut, runErr bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runErr
	require.NoError(t, run.Start())
	ended := false
	defer func() {
		if !ended {
			_ = os.WriteFile(release, nil, 0o644)
			_ = run.Wait()
		}
	}()

	appID := waitForRunning(t, c, bin, name)
	tracking := statusJSON(t, c, appID).TrackingURL
	require.Regexp(t, `^http://[^/]+/proxy/`+appID+`/$`, tracking, "the RM's web proxy fronts the AM's page")

	// Through the proxy, the JSON beside the page: wait for both tasks to
	// run and report their GPUs.
	var rep contract.StatusReport
	deadline := time.Now().Add(time.Minute)
	for {
		rep = proxyStatus(t, tracking+strings.TrimPrefix(contract.StatusPath, "/"))
		if rep.Counts.Running == 2 && len(rep.Tasks[0].GPUs) == 1 && len(rep.Tasks[1].GPUs) == 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "waiting 1m for 2 running tasks with GPU samples: %+v", rep)
		time.Sleep(300 * time.Millisecond)
	}
	h100 := contract.GPUSample{Index: 0, Name: "NVIDIA H100 80GB HBM3", UtilizationPct: 0, MemoryUsedMiB: 0, MemoryTotalMiB: 81559}
	require.Equal(t, []contract.GPUSample{h100}, rep.Tasks[0].GPUs)

	// The page in a real browser, through the proxy.
	shot := filepath.Join(c.Root, "bench", "results", "webui.png")
	dom := headless(t, chromium, "--dump-dom", tracking)
	_ = headless(t, chromium, "--screenshot="+shot, tracking)
	png, err := os.ReadFile(shot)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(png, []byte("\x89PNG")) && len(png) > 10<<10, "a real screenshot at %s", shot)
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))

	// The page refreshes itself through the proxy: the script fetched it
	// again and swapped it in (virtual time lets its timer fire).
	refreshed := headless(t, chromium, "--dump-dom", tracking, "--virtual-time-budget=10000")
	require.Regexp(t, `<main id="live" data-final="false" data-refreshes="[1-9]`, refreshed)
	require.Contains(t, refreshed, `data-task="worker:1" data-state="running"`)

	require.Contains(t, dom, "<h1>"+appID+` <span class="name">`+name+"</span></h1>")
	require.Contains(t, dom, `id="command">sh -c 'echo "$TFYARN_TASK waits";`)
	require.Contains(t, dom, `<span class="group">--worker 2x1c,256m</span>`)
	require.Contains(t, dom, `id="queue">ml-gpu</td>`)
	require.Contains(t, dom, `id="label">gpu</td>`)
	require.Contains(t, dom, `href="status"`)
	for i, task := range rep.Tasks {
		row := taskRow(t, dom, task.Task)
		require.Contains(t, row, `data-state="running"`)
		require.Contains(t, row, fmt.Sprintf("%s:%d", task.Host, task.Port))
		require.Contains(t, row, task.ContainerID)
		require.Contains(t, row, task.Node)
		require.Contains(t, row, `<td class="exit">-</td>`)
		require.Contains(t, row, `<td class="restarts">0</td>`)
		require.Regexp(t, `<td class="elapsed">\d+s</td>`, row)
		require.Contains(t, row, "0: 0% 0/81559 MiB")
		logs := fmt.Sprintf("http://%s/node/containerlogs/%s/%s/stdout", task.NodeHTTP, task.ContainerID, rep.User)
		require.Contains(t, row, `href="`+logs+`"`, "task %d", i)
		// The link is the NodeManager's live log of the task.
		require.Contains(t, httpGet(t, logs), task.Task+" waits")
	}

	// Running: status shows the live task table, GPUs included.
	out, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", appID)
	t.Logf("status while running:\n%s%s", out, errOut)
	require.Equal(t, exitOK, code, errOut)
	for _, task := range rep.Tasks {
		require.Regexp(t, `(?m)^`+task.Task+`\s+running\s+\S+\s+`+task.ContainerID+`\s+\S+\s+-\s+0\s+\d+s\s+0: 0% 0/81559 MiB$`, out)
	}

	liveJSON, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", appID, "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var running statusView
	require.NoError(t, json.Unmarshal([]byte(liveJSON), &running), liveJSON)
	require.Nil(t, running.History)
	require.NotNil(t, running.Live, liveJSON)
	require.Len(t, running.Live.Tasks, 2)
	require.Equal(t, []contract.GPUSample{h100}, running.Live.Tasks[1].GPUs)

	require.NoError(t, os.WriteFile(release, nil, 0o644))
	err = run.Wait()
	ended = true
	t.Logf("run stdout: %s\nstderr: %s", runOut.String(), runErr.String())
	require.NoError(t, err)
	res := runJSON(t, runOut.String())
	require.Equal(t, "SUCCEEDED", res.FinalStatus)

	// Ended: status shows the task table from the AM's history record.
	out, errOut, code = runCLI(t, "--conf-dir", c.ConfDir, "status", appID)
	t.Logf("status:\n%s%s", out, errOut)
	require.Equal(t, exitOK, code, errOut)
	require.Regexp(t, `(?m)^Command\s*:?\s+sh -c 'echo`, out)
	require.Regexp(t, `(?m)^TASK\s+STATE\s+ADDRESS\s+CONTAINER\s+NODE\s+EXIT\s+RESTARTS\s+ELAPSED\s+GPUS$`, out)
	for _, task := range rep.Tasks {
		require.Regexp(t, `(?m)^`+task.Task+`\s+succeeded\s+`+regexp.QuoteMeta(fmt.Sprintf("%s:%d", task.Host, task.Port))+`\s+`+
			task.ContainerID+`\s+`+regexp.QuoteMeta(task.Node)+`\s+0\s+0\s+\d+s\s+0: 0% 0/81559 MiB$`, out)
	}
	jsonOut, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", appID, "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var v statusView
	require.NoError(t, json.Unmarshal([]byte(jsonOut), &v), jsonOut)
	require.NotNil(t, v.History, jsonOut)
	require.True(t, v.History.Final)
	require.Equal(t, "SUCCEEDED", v.History.FinalStatus)
	require.Equal(t, "all 2 tasks succeeded", v.History.Diagnostics)
	require.NotNil(t, v.History.EndedAt)
	for i, task := range v.History.Tasks {
		require.Equal(t, rep.Tasks[i].ContainerID, task.ContainerID)
		require.Equal(t, rep.Tasks[i].Node, task.Node)
		require.Equal(t, int32(0), *task.ExitCode)
		require.NotNil(t, task.StartedAt)
		require.NotNil(t, task.EndedAt)
		require.Equal(t, []contract.GPUSample{h100}, task.GPUs)
	}
	requireNoStaging(t, c, appID)
}

// headless runs chromium headless on url with one output flag (and more
// options) and returns its stdout.
func headless(t *testing.T, chromium, flag, url string, more ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--hide-scrollbars", "--window-size=1500,700", "--user-data-dir=" + t.TempDir()}, more...)
	cmd := exec.CommandContext(ctx, chromium, append(args, flag, url)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "chromium %s: %s", flag, errb.String())
	return out.String()
}

// taskRow is the web page's row of task.
func taskRow(t *testing.T, dom, task string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr class="task" data-task="` + regexp.QuoteMeta(task) + `".*?</tr>`).FindString(dom)
	require.NotEmpty(t, m, "no row for %s in the page", task)
	return m
}

func proxyStatus(t *testing.T, url string) contract.StatusReport {
	t.Helper()
	var rep contract.StatusReport
	require.NoError(t, json.Unmarshal([]byte(httpGet(t, url)), &rep))
	return rep
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s: %s", url, body)
	return string(body)
}
