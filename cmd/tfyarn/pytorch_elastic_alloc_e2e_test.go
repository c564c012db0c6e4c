//go:build e2e

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// An elastic PyTorch job whose third worker never gets a container: each
// worker asks one GPU of the gpu-labelled node, which has two. Preflight
// lets it through (--min-workers 2 fit), worker:0 and worker:1 train as a
// world of 2, worker:2 waits past --alloc-timeout while the job goes on:
// run's live line, tfyarn status and the AM's log say it waits, since
// when and why (the GPUs there are in use); once the two end, the job
// SUCCEEDS, its diagnostics naming worker:2.
//
//	go test -tags e2e -run E2EPyTorchElasticAllocTimeout ./cmd/tfyarn/
func TestE2EPyTorchElasticAllocTimeout(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	python := frameworkPython(t, c, "pytorch")
	progress := clustertest.ContainerDir(t)
	stopFile := filepath.Join(progress, "stop")
	const allocTimeout = 45 * time.Second
	run := startTfyarn(t, c, bin, 8*time.Minute, "run", "--framework", "pytorch", "--queue", "ml-gpu",
		"--worker", "3x1c,1536m,1gpu", "--min-workers", "2", "--elastic-last-call", "5s", "--alloc-timeout", allocTimeout.String(),
		"--python", python, "--output", "json", "--name", "e2e-pytorch-elastic-alloc",
		filepath.Join(c.Root, "examples", "pytorch_elastic.py"), "--", "--steps", "1000", "--step-seconds", "0.5",
		"--progress-dir", progress, "--stop-file", stopFile)
	started := time.Now()

	// The two workers with a GPU train.
	for {
		_, ok0 := stepAtLeast(filepath.Join(progress, "worker-0.local0.step"), 2)
		_, ok1 := stepAtLeast(filepath.Join(progress, "worker-1.local0.step"), 2)
		if ok0 && ok1 {
			break
		}
		require.True(t, time.Since(started) < 4*time.Minute, "worker:0 and worker:1 did not train within 4 minutes (progress files in %s)\nstderr: %s", progress, &run.stderr)
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("worker:0 and worker:1 train %.1fs after the submission", time.Since(started).Seconds())

	// Past --alloc-timeout the job goes on, and run says what worker:2
	// waits for, since when, and who holds the GPUs.
	waiting := regexp.QuoteMeta(`worker:2 waiting for a container (1 vcores, 1536 MiB, 1 GPUs, label "gpu") since `) + `(\d\d:\d\d:\d\d) UTC` +
		regexp.QuoteMeta(`, past --alloc-timeout 45s: queue ml-gpu on nodes labelled gpu: `) + `.*` +
		regexp.QuoteMeta(`; the job goes on without it (--min-workers 2) and keeps asking`)
	m := run.waitStderr(t, regexp.MustCompile(`(application_\d+_\d+) `+waiting+regexp.QuoteMeta(`; 2 of 2 GPUs on nodes labelled gpu in use`)), 4*time.Minute)
	appID, since := m[1], m[2]
	t.Logf("run: %s", m[0])
	asked, err := time.Parse("15:04:05", since)
	require.NoError(t, err)
	now := time.Now().UTC()
	asked = time.Date(now.Year(), now.Month(), now.Day(), asked.Hour(), asked.Minute(), asked.Second(), 0, time.UTC)
	require.WithinDuration(t, started, asked, 2*time.Minute, "worker:2 has waited since about the submission")
	t.Logf("run said worker:2 waits past --alloc-timeout %.1fs after the submission", time.Since(started).Seconds())
	_, err = os.Stat(filepath.Join(progress, "worker-2.local0.step"))
	require.True(t, os.IsNotExist(err), "worker:2 never ran: %v", err)

	// tfyarn status says the same while the job runs.
	out, errOut, code := execTfyarn(t, c, bin, nil, "status", appID)
	require.Equal(t, 0, code, "tfyarn status: %s", errOut)
	require.Regexp(t, `(?m)^Waiting +: `+waiting+`$`, out)

	// The two train on; then they end, and the job with them.
	before, _, _, _ := readStep(filepath.Join(progress, "worker-1.local0.step"))
	require.Eventually(t, func() bool {
		s, _, _, _ := readStep(filepath.Join(progress, "worker-1.local0.step"))
		return s > before+2
	},
		2*time.Minute, 250*time.Millisecond, "worker:1 trained on past the deadline")
	require.NoError(t, os.WriteFile(stopFile, nil, 0o644))
	code = run.wait(t, 4*time.Minute)
	require.Equal(t, exitOK, code, "stderr: %s", &run.stderr)
	var r client.Result
	require.NoError(t, json.Unmarshal([]byte(run.stdout.String()), &r), run.stdout.String())
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	require.Regexp(t, `^2 of 3 workers succeeded; lost on the way: `+regexp.QuoteMeta(`worker:2 (1 vcores, 1536 MiB, 1 GPUs, label "gpu") got no container before worker:`)+`[01]`+
		regexp.QuoteMeta(` succeeded (waited `)+`(\d+m)?\d+s\), not asked for since: the job was finishing$`, r.Diagnostics)

	logs := aggregatedLogs(t, c, bin, appID)
	// The two trained as a world of 2, never 3.
	require.Regexp(t, `rank [01] of 2 \(restart 0\)`, logs)
	require.NotRegexp(t, `rank \d of 3`, logs)
	// The AM's log said once that the job goes on without worker:2.
	note := regexp.MustCompile(regexp.QuoteMeta(`worker:2 (1 vcores, 1536 MiB, 1 GPUs, label "gpu") was not allocated within 45s (--alloc-timeout): queue ml-gpu on nodes labelled gpu: `) +
		`.*` + regexp.QuoteMeta(`; the job goes on with the 2 of 3 workers that have one (--min-workers 2) and keeps asking for it`))
	require.Len(t, note.FindAllString(logs, -1), 1, "the AM's log:\n%s", logs)
	require.Contains(t, logs, "no longer asking for worker:2's container: worker:")
	t.Logf("the job ended %.1fs after the submission: %s", time.Since(started).Seconds(), strconv.Quote(r.Diagnostics))
}
