//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/jobreport"
)

// TestE2EWebUIHistoryGPU follows one real job through what users look
// into: the web UI at the tracking URL through the RM's web proxy, in a
// real headless browser (Debian's chromium; the screenshot is kept in
// bench/results/webui.png), the tasks' live-log links, the GPU metrics a
// stand-in nvidia-smi (printing a real H100's output, put on PATH with
// --setenv: the test cluster's nodes are this machine) feeds the launchers, and, once the job
// ended, the history record `tfyarn status` shows the task table from.
//
//	go test -tags e2e -run E2EWebUIHistoryGPU ./cmd/tfyarn/
func TestE2EWebUIHistoryGPU(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	chromium := chromiumPath(t)

	dir := clustertest.ContainerDir(t) // the tasks run its nvidia-smi and wait for its release file
	fixture, err := os.ReadFile(filepath.Join(c.Root, "internal", "executor", "testdata", "h100-query-gpu.csv"))
	require.NoError(t, err)
	smi := filepath.Join(dir, "nvidia-smi")
	require.NoError(t, os.WriteFile(smi, []byte("#!/bin/sh\ncat <<'EOF'\n"+string(fixture)+"EOF\n"), 0o755))
	release := filepath.Join(dir, "release")

	name := "e2e-webui-" + randomHex(t)
	// The tasks go to the gpu-labelled NodeManager through the ml-gpu queue,
	// so that the page has a queue and a node label to show.
	run := startHeldRun(t, c, 4*time.Minute, release, bin, "run", "--name", name, "--worker", "2x1c,256m", "--success", "all",
		"--queue", "ml-gpu", "--node-label", "gpu",
		"--setenv", "PATH="+dir+":/usr/local/bin:/usr/bin:/bin", "--output", "json", "--",
		"sh", "-c", fmt.Sprintf(`echo "$TFYARN_TASK waits"; while [ ! -e %s ]; do sleep 0.2; done; echo "$TFYARN_TASK done"`, release))

	appID := waitForRunning(t, c, bin, name)
	tracking := statusJSON(t, c, appID).TrackingURL
	require.Regexp(t, `^http://[^/]+/proxy/`+appID+`/$`, tracking, "the RM's web proxy fronts the AM's page")

	// Through the proxy, the JSON beside the page, as the viewer the RM
	// names the job's owner: wait for both tasks to run and report their
	// GPUs.
	owner := ownerQuery(t, tracking)
	var rep contract.StatusReport
	deadline := time.Now().Add(time.Minute)
	for {
		rep = proxyStatus(t, tracking+strings.TrimPrefix(contract.StatusPath, "/")+owner)
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
	dom := headless(t, chromium, "--dump-dom", tracking+owner)
	_ = headless(t, chromium, "--screenshot="+shot, tracking+owner)
	png, err := os.ReadFile(shot)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(png, []byte("\x89PNG")) && len(png) > 10<<10, "a real screenshot at %s", shot)
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))

	// The page refreshes itself through the proxy: the script fetched it
	// again and swapped it in (virtual time lets its timer fire).
	refreshed := headless(t, chromium, "--dump-dom", tracking+owner, "--virtual-time-budget=10000")
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
		require.Regexp(t, `(?m)^`+task.Task+`\s+running\s+\S+\s+`+task.ContainerID+`\s+\S+\s+-\s+0\s+\d+s\s+(-|\d+% \d.* \(peak .*\))\s+0: 0% 0/81559 MiB$`, out)
	}

	liveJSON, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", appID, "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var running statusView
	require.NoError(t, json.Unmarshal([]byte(liveJSON), &running), liveJSON)
	require.Nil(t, running.History)
	require.NotNil(t, running.Live, liveJSON)
	require.Len(t, running.Live.Tasks, 2)
	require.Equal(t, []jobreport.GPUSample{jobreport.GPUSample(h100)}, running.Live.Tasks[1].GPUs)

	require.NoError(t, run.finish())
	res := runJSON(t, run.stdout.String())
	require.Equal(t, "SUCCEEDED", res.FinalStatus)

	// Ended: status shows the task table from the AM's history record.
	out, errOut, code = runCLI(t, "--conf-dir", c.ConfDir, "status", appID)
	t.Logf("status:\n%s%s", out, errOut)
	require.Equal(t, exitOK, code, errOut)
	require.Regexp(t, `(?m)^Command\s*:?\s+sh -c 'echo`, out)
	require.Regexp(t, `(?m)^TASK\s+STATE\s+ADDRESS\s+CONTAINER\s+NODE\s+EXIT\s+RESTARTS\s+ELAPSED\s+CPU/MEMORY\s+GPUS$`, out)
	for _, task := range rep.Tasks {
		require.Regexp(t, `(?m)^`+task.Task+`\s+succeeded\s+`+regexp.QuoteMeta(fmt.Sprintf("%s:%d", task.Host, task.Port))+`\s+`+
			task.ContainerID+`\s+`+regexp.QuoteMeta(task.Node)+`\s+0\s+0\s+\d+s\s+(-|\d+% \d.* \(peak .*\))\s+0: 0% 0/81559 MiB$`, out)
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
		require.Equal(t, []jobreport.GPUSample{jobreport.GPUSample(h100)}, task.GPUs)
	}
	requireNoStaging(t, c, appID)
}

// heldRun is `tfyarn run` started in the background with a job whose
// tasks hold until a release file exists, so a test can look at the job
// while it runs.
type heldRun struct {
	t              *testing.T
	cmd            *exec.Cmd
	release        string
	stdout, stderr syncBuffer
	done           bool
}

// startHeldRun starts bin with args and the cluster's environment, bounded
// by timeout. Should the test end without finish, the job is released and
// waited for all the same.
func startHeldRun(t *testing.T, c *clustertest.Cluster, timeout time.Duration, release, bin string, args ...string) *heldRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	r := &heldRun{t: t, cmd: exec.CommandContext(ctx, bin, args...), release: release}
	r.cmd.Env = c.Env()
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		if !r.done {
			_ = r.finish()
		}
		cancel()
	})
	return r
}

// finish releases the job's tasks and waits for run to exit, logging its
// output.
func (r *heldRun) finish() error {
	r.done = true
	if err := os.WriteFile(r.release, nil, 0o644); err != nil {
		return err
	}
	err := r.cmd.Wait()
	r.t.Logf("run stdout: %s\nstderr: %s", r.stdout.String(), r.stderr.String())
	return err
}

// chromiumPath is Debian's chromium, which the web UI checks drive.
func chromiumPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	require.NoError(t, err, "the web UI checks need Debian's chromium (apt-get install chromium; .ci/run installs it)")
	return p
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

// ownerQuery is the query by which the ResourceManager's simple HTTP
// authentication (the test clusters', YARN's default without Kerberos)
// names the viewer the job's owner: the AM then shows the owner's view
// through the proxy (docs/security.md). The public view names the owner.
func ownerQuery(t *testing.T, tracking string) string {
	t.Helper()
	rep := proxyStatus(t, tracking+strings.TrimPrefix(contract.StatusPath, "/"))
	require.NotEmpty(t, rep.User, "the public view names the job's owner")
	return "?user.name=" + neturl.QueryEscape(rep.User)
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	body, err := getPage(url, 30*time.Second)
	require.NoError(t, err)
	return body
}

// tryGet is httpGet for a page that may not answer (yet, or any more).
func tryGet(url string) (string, error) { return getPage(url, 5*time.Second) }

// getPage GETs url within timeout; a status other than 200 is an error
// that quotes the body.
func getPage(url string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return string(body), err
}
