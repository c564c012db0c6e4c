//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// Bad nodes on the real cluster: a task that fails on the first node it
// runs on (recorded in a file) succeeds on another, that node excluded
// (--max-node-failures 1): run tells it, the history records it. Then
// --exclude-nodes keeps a job's task and its ApplicationMaster off a node.
//
//	go test -tags e2e -run 'TestE2EBadNodes$' ./cmd/tfyarn/
func TestE2EBadNodes(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	first := filepath.Join(clustertest.ContainerDir(t), "first-node")
	// $NM_HOST is the NodeManager's host, which YARN sets in every container.
	failFirst := `[ -s ` + first + ` ] || echo "$NM_HOST" > ` + first + `; echo "on $NM_HOST"; [ "$(cat ` + first + `)" != "$NM_HOST" ] || { echo "Xid 79 on $NM_HOST" >&2; exit 3; }`
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--output", "json", "--name", "e2e-bad-node",
		"--max-restarts", "1", "--max-node-failures", "1", "--worker", "1c,256m", "--", "sh", "-c", failFirst)
	r := runJSON(t, stdout)
	require.Equal(t, exitOK, code, "%s\n%s", r.Diagnostics, stderr)
	require.Equal(t, 1, r.Restarts)
	data, err := os.ReadFile(first)
	require.NoError(t, err)
	bad := strings.TrimSpace(string(data))
	require.NotEmpty(t, bad)
	require.Len(t, r.Tasks, 1)
	require.NotEqual(t, bad, nodeHost(r.Tasks[0].Node), "the restart ran on another node")
	told := `(?m)^` + regexp.QuoteMeta(r.AppID+" excluding node "+bad+": 1 task attempt failed there (--max-node-failures 1), the last: worker:0 (container ") + `\S+ on ` + regexp.QuoteMeta(bad) + `:\d+\) failed: exit code 3`
	require.Regexp(t, told, stderr, "run says which node and why")
	doc := clustertest.DocSection(t, "## Nodes that fail tasks")
	require.Regexp(t, strings.NewReplacer(regexp.QuoteMeta(r.AppID), "application_1_0001", regexp.QuoteMeta(bad), "nm0.example", `\S+`, `\.\.\.`, `:\d+`, ":8041").Replace(told), doc, "the page shows run's line as it is")
	for _, claim := range []string{"`--max-node-failures` of the job's task attempts failed (default 2)", "`Excluded-Node` line", "`excluded_nodes` (`host`, `reason`)"} {
		require.Contains(t, strings.Join(strings.Fields(doc), " "), claim)
	}

	out, errOut, code := execTfyarn(t, c, bin, nil, "status", r.AppID, "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var v statusView
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	require.NotNil(t, v.History, out)
	require.Len(t, v.History.ExcludedNodes, 1, "the history records it")
	require.Equal(t, bad, v.History.ExcludedNodes[0].Host)
	require.Contains(t, v.History.ExcludedNodes[0].Reason, "failed: exit code 3")
	text, _, code := execTfyarn(t, c, bin, nil, "status", r.AppID)
	require.Equal(t, exitOK, code)
	require.Contains(t, text, "Excluded-Node")
	require.Contains(t, text, bad+": 1 task attempt failed there")

	// --exclude-nodes: neither the task nor the ApplicationMaster goes there.
	stdout, stderr, code = execTfyarn(t, c, bin, nil, "run", "--output", "json", "--name", "e2e-exclude-nodes",
		"--exclude-nodes", bad, "--worker", "1c,256m", "--", "sh", "-c", `echo "on $NM_HOST"; [ "$NM_HOST" != "`+bad+`" ]`)
	r = runJSON(t, stdout)
	require.Equal(t, exitOK, code, "%s\n%s", r.Diagnostics, stderr)
	require.NotEqual(t, bad, nodeHost(r.Tasks[0].Node))
	require.Contains(t, stderr, r.AppID+" excluding node "+bad+": excluded at submission (--exclude-nodes)")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := yarn.ParseApplicationID(r.AppID)
	require.NoError(t, err)
	rep, err := clientFor(t, c.ConfDir).GetApplicationReport(ctx, id)
	require.NoError(t, err)
	require.NotEmpty(t, rep.GetHost())
	require.NotEqual(t, bad, rep.GetHost(), "the ApplicationMaster ran elsewhere")

	_, stderr, code = execTfyarn(t, c, bin, nil, "run", "--exclude-nodes", "a b", "--worker", "1c,256m", "--", "true")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, `--exclude-nodes: "a b" is not a node's host name`)
}

// nodeHost is a NodeId's host.
func nodeHost(id string) string {
	if i := strings.LastIndex(id, ":"); i >= 0 {
		return id[:i]
	}
	return id
}

// --oom-grow on the real cluster: a task the NodeManager kills for its
// memory at 256 MiB (exit status -104) restarts with 512 MiB, and
// succeeds.
//
//	go test -tags e2e -run 'TestE2EOOMGrow$' ./cmd/tfyarn/
func TestE2EOOMGrow(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	// The first attempt holds the memory until the NodeManager's monitor kills it (its period and
	// a loaded machine may take longer than a few seconds); the grown one holds it 4 s and ends.
	program := `import os, time; b = b"x" * (350 << 20); time.sleep(90 if os.environ["TFYARN_RESTART"] == "0" else 4)`
	stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, nil, "run", "--output", "json", "--name", "e2e-oom-grow",
		"--max-restarts", "1", "--oom-grow", "2", "--worker", "1c,256m", "--", "python3", "-c", program)
	r := runJSON(t, stdout)
	require.Equal(t, exitOK, code, "%s\n%s", r.Diagnostics, stderr)
	require.Equal(t, 1, r.Restarts)
	grown := "(worker:0 restarts with 512 MiB: --oom-grow 2)"
	require.Regexp(t, `restart 1 after worker:0 \(container \S+ on \S+\) failed: killed for exceeding its physical memory limit.*\(exit status -104\).* `+regexp.QuoteMeta(grown)+`$`, r.Diagnostics)
	require.Regexp(t, `(?m)^`+regexp.QuoteMeta(r.AppID)+` restarting: restart 1 after worker:0 .* `+regexp.QuoteMeta(grown)+`$`, stderr, "run says it as it happens")
	require.Len(t, r.Tasks, 1)
	require.EqualValues(t, 512<<20, r.Tasks[0].MemoryLimitBytes, "the second attempt's container")

	out, errOut, code := execTfyarn(t, c, bin, nil, "status", r.AppID, "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var v statusView
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	require.NotNil(t, v.History, out)
	require.Len(t, v.History.RestartCauses, 1)
	require.True(t, strings.HasSuffix(v.History.RestartCauses[0], grown), "the history records the memory: %s", v.History.RestartCauses[0])
	require.Len(t, v.History.Tasks, 1)
	attempts := v.History.Tasks[0].Attempts
	require.Len(t, attempts, 2, "the history's attempts: %+v", attempts)
	require.EqualValues(t, 256, attempts[0].MemoryMiB)
	require.True(t, strings.HasSuffix(attempts[0].Failure, grown), "the first attempt says why the next has more: %s", attempts[0].Failure)
	require.EqualValues(t, 512, attempts[1].MemoryMiB)
	require.Equal(t, []int{0, 1}, []int{attempts[0].Attempt, attempts[1].Attempt})
	require.Equal(t, r.Tasks[0].ContainerID, attempts[1].ContainerID)
	doc := strings.Join(strings.Fields(clustertest.DocSection(t, "## Memory after an out-of-memory kill")), " ")
	require.Contains(t, doc, grown)
	require.Contains(t, doc, "The history's `attempts` of each task list its containers, oldest first, with the memory each ran with (`memory_mib`) and how it ended (`failure`, whose line says when `--oom-grow` gave the next more): 256 then 512 MiB here (`TestE2EOOMGrow`).")
}

// --exclude-node-on-log and --fail-on-log on the real cluster: a program
// that writes an Xid line on its first node, then hangs, is ended there
// and succeeds on another node, that one excluded; a program that writes
// a --fail-on-log line and hangs ends the job FAILED with the line, at
// once, restarts left or not.
//
//	go test -tags e2e -run 'TestE2ELogRules$' ./cmd/tfyarn/
func TestE2ELogRules(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	first := filepath.Join(clustertest.ContainerDir(t), "first-node")
	xidOnFirst := `[ -s ` + first + ` ] || echo "$NM_HOST" > ` + first + `; [ "$(cat ` + first + `)" != "$NM_HOST" ] || { echo "NVRM: Xid 79, GPU has fallen off the bus" >&2; sleep 120; }; echo fine`
	start := time.Now()
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--output", "json", "--name", "e2e-exclude-node-on-log",
		"--max-restarts", "1", "--exclude-node-on-log", "Xid (79|48)|uncorrectable ECC", "--worker", "1c,256m", "--", "sh", "-c", xidOnFirst)
	r := runJSON(t, stdout)
	require.Equal(t, exitOK, code, "%s\n%s", r.Diagnostics, stderr)
	require.Less(t, time.Since(start), 100*time.Second, "the hanging program was ended, not waited for")
	data, err := os.ReadFile(first)
	require.NoError(t, err)
	bad := strings.TrimSpace(string(data))
	require.NotEqual(t, bad, nodeHost(r.Tasks[0].Node))
	line := "NVRM: Xid 79, GPU has fallen off the bus"
	require.Contains(t, stderr, r.AppID+" excluding node "+bad+": worker:0 wrote a line matching --exclude-node-on-log: "+line)
	require.Regexp(t, `restart 1 after worker:0 \(container \S+ on `+regexp.QuoteMeta(bad)+`:\d+\) wrote a line matching --exclude-node-on-log: `+regexp.QuoteMeta(line), r.Diagnostics)

	start = time.Now()
	stdout, stderr, code = execTfyarn(t, c, bin, nil, "run", "--output", "json", "--name", "e2e-fail-on-log",
		"--max-restarts", "2", "--fail-on-log", "loss is (NaN|inf)", "--worker", "1c,256m", "--", "sh", "-c", `echo "step 7: loss is NaN" >&2; sleep 120`)
	r = runJSON(t, stdout)
	require.Equal(t, exitJobFailed, code, stderr)
	require.Less(t, time.Since(start), 100*time.Second)
	require.Zero(t, r.Restarts, "the job ends, restarts left or not")
	require.Regexp(t, `^worker:0 \(container \S+ on \S+\) wrote a line matching --fail-on-log: step 7: loss is NaN`, r.Diagnostics)
	doc := strings.Join(strings.Fields(clustertest.DocSection(t, "## Lines that name a fault")), " ")
	for _, claim := range []string{"wrote a line matching --fail-on-log: ", "wrote a line matching --exclude-node-on-log: "} {
		require.Contains(t, doc, claim)
	}
}

// --gpu-idle-timeout on the real cluster: the test cluster's stand-in
// nvidia-smi (testcluster/gpu/nvidia-smi, on the tasks' PATH) reports 0 %
// utilisation; a job whose GPUs stay idle past a short timeout is warned
// at half of it, then ends FAILED with the reason, long before its
// program would have.
//
//	go test -tags e2e -run 'TestE2EGPUIdle$' ./cmd/tfyarn/
func TestE2EGPUIdle(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	dir := clustertest.ContainerDir(t)
	smi, err := os.ReadFile(filepath.Join(c.Root, "testcluster", "gpu", "nvidia-smi"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nvidia-smi"), smi, 0o755))
	// The program waits for the gpu-idle line in its warnings file and leaves
	// what it saw in dir: the file, its mode, and whether a preemption
	// warning file appeared.
	seen := filepath.Join(dir, "seen")
	program := `while ! grep -q '"kind":"gpu-idle"' "$TFYARN_WARNINGS_FILE" 2>/dev/null; do sleep 0.2; done
{ cat "$TFYARN_WARNINGS_FILE"; stat -c "mode=%a" "$TFYARN_WARNINGS_FILE"; test -e "$TFYARN_PREEMPTION_FILE" && echo "a preemption file"; } > "$1.tmp"
chmod 644 "$1.tmp" && mv "$1.tmp" "$1"; sleep 300`
	start := time.Now()
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--output", "json", "--name", "e2e-gpu-idle",
		"--gpu-idle-timeout", "12s", "--worker", "1c,256m", "--setenv", "PATH="+dir+":/usr/local/bin:/usr/bin:/bin", "--", "sh", "-c", program, "sh", seen)
	took := time.Since(start)
	r := runJSON(t, stdout)
	require.Equal(t, exitJobFailed, code, stderr)
	require.Equal(t, "GPUs idle for 12s (0 % utilisation, --gpu-idle-timeout 12s)", r.Diagnostics)
	require.Less(t, took, 2*time.Minute, "ended for its idle GPUs, not its program's end")
	require.Regexp(t, `(?m)^`+regexp.QuoteMeta(r.AppID)+` warning: GPUs idle for \d+s \(0 % utilisation\): the job fails at --gpu-idle-timeout 12s unless they work$`, stderr, "run warns first")
	doc := strings.Join(strings.Fields(clustertest.DocSection(t, "## Idle GPUs")), " ")
	require.Contains(t, doc, "GPUs idle for 30m0s (0 % utilisation, --gpu-idle-timeout 30m0s)")
	require.Contains(t, doc, "a `gpu-idle` line in its `TFYARN_WARNINGS_FILE`, whose `ends_at` is when the job fails")
	require.Contains(t, doc, "No signal comes with it, and `TFYARN_PREEMPTION_FILE` stays absent")

	data, err := os.ReadFile(seen)
	require.NoError(t, err, "the program saw no gpu-idle warning in its warnings file\n%s", stderr)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Len(t, lines, 2, "one warning, then the mode, and no preemption file: %s", data)
	var w contract.Warning
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &w), lines[0])
	require.Equal(t, contract.WarningGPUIdle, w.Kind)
	require.Regexp(t, `^GPUs idle for \d+s \(0 % utilisation\): the job fails at --gpu-idle-timeout 12s unless they work$`, w.Reason)
	require.Equal(t, "worker:0", w.Task)
	require.True(t, strings.HasPrefix(w.Container, "container_"), w.Container)
	require.WithinDuration(t, time.UnixMilli(w.TimeUnixMS).Add(6*time.Second), time.UnixMilli(w.EndsAtUnixMS), 2*time.Second, "the job fails at the timeout, half of it after the warning")
	require.Equal(t, "mode=600", lines[1])
	t.Logf("ended after %.1fs", took.Seconds())
}

// tfyarn report on the real cluster: a GPU job's GPU-hours allocated are
// the ResourceManager's yarn.io/gpu resource-seconds for it, asked of the
// RM apart; its GPU-hours used come from its GPU samples (the stand-in
// nvidia-smi at 50 %); the CSV says the same.
//
//	go test -tags e2e -run 'TestE2EReport$' ./cmd/tfyarn/
func TestE2EReport(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	dir := clustertest.ContainerDir(t)
	smi, err := os.ReadFile(filepath.Join(c.Root, "testcluster", "gpu", "nvidia-smi"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nvidia-smi"), smi, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "utilization"), []byte("50\n"), 0o644))
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--output", "json", "--name", "e2e-report",
		"--worker", "1c,256m,1gpu", "--setenv", "PATH="+dir+":/usr/local/bin:/usr/bin:/bin", "--", "sleep", "12")
	r := runJSON(t, stdout)
	require.Equal(t, exitOK, code, "%s\n%s", r.Diagnostics, stderr)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := yarn.ParseApplicationID(r.AppID)
	require.NoError(t, err)
	rmReport, err := clientFor(t, c.ConfDir).GetApplicationReport(ctx, id)
	require.NoError(t, err)
	var gpuSeconds int64
	for _, e := range rmReport.GetAppResource_Usage().GetApplicationResourceUsageMap() {
		if e.GetKey() == "yarn.io/gpu" {
			gpuSeconds = e.GetValue()
		}
	}
	require.Positive(t, gpuSeconds, "the RM accounts the job's GPU")

	out, errOut, code := execTfyarn(t, c, bin, nil, "report", "--since", "1h", "--output", "json")
	require.Equal(t, exitOK, code, errOut)
	var rep usageReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	var app *appUsage
	for i := range rep.Applications {
		if rep.Applications[i].AppID == r.AppID {
			app = &rep.Applications[i]
		}
	}
	require.NotNil(t, app, out)
	require.InDelta(t, float64(gpuSeconds)/3600, app.GPUHours, 1e-9, "the report's GPU-hours are the RM's resource-seconds")
	require.NotNil(t, app.GPUHoursUsed)
	require.Greater(t, *app.GPUHoursUsed, 0.0, "50 % between two samples")
	require.LessOrEqual(t, *app.GPUHoursUsed, app.GPUHours)
	t.Logf("RM submit %d launch %d start %d; report's queue wait %v", rmReport.GetSubmitTime(), rmReport.GetLaunchTime(), rmReport.GetStartTime(), app.QueueWaitSeconds)
	require.NotNil(t, app.QueueWaitSeconds, "the RM reports the AM's launch")
	require.InDelta(t, float64(rmReport.GetLaunchTime()-max(rmReport.GetSubmitTime(), rmReport.GetStartTime()))/1000, *app.QueueWaitSeconds, 1e-6)
	require.Equal(t, 0, *app.Restarts)
	require.GreaterOrEqual(t, rep.Total.GPUHours, app.GPUHours)

	csvOut, errOut, code := execTfyarn(t, c, bin, nil, "report", "--since", "1h", "--output", "csv")
	require.Equal(t, exitOK, code, errOut)
	require.Regexp(t, `(?m)^`+regexp.QuoteMeta(r.AppID)+`,alice,[^,]*default,FINISHED,`+regexp.QuoteMeta(strconv.FormatFloat(app.GPUHours, 'f', 3, 64))+`,`, csvOut)
	_, errOut, code = execTfyarn(t, c, bin, nil, "report", "--since", "soon")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, `--since "soon": give a duration such as 12h, or days such as 7d`)
}
