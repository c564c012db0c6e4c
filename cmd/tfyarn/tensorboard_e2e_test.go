//go:build e2e

package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/contract"
)

// TestE2ETensorBoard: `run --tensorboard --logdir` runs TensorBoard from the
// job's Python as a task of the job, beside examples/mwms_keras.py writing
// summaries there: run prints its URL, it serves the chief's summaries,
// status and the web UI's report show it, TF_CONFIG's cluster leaves it
// out, and it is stopped once the chief succeeded. The chief holds after
// training until the test has looked (a release file), so TensorBoard is
// seen serving what was written.
//
//	go test -tags e2e -run E2ETensorBoard ./cmd/tfyarn/
func TestE2ETensorBoard(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	python := tfPython(t, c)
	dir := clustertest.ContainerDir(t)
	logDir, release := filepath.Join(dir, "logs"), filepath.Join(dir, "release")
	program := fmt.Sprintf(`"$0" mwms_keras.py --epochs 2 --steps-per-epoch 5 --log-dir %s || exit; `+
		`if [ "$TFYARN_TASK" = chief:0 ]; then while [ ! -e %s ]; do sleep 0.2; done; fi`, logDir, release)

	name := "e2e-tensorboard-" + randomHex(t)
	run := startHeldRun(t, c, 6*time.Minute, release, bin, "run", "--name", name, "--chief", "1c,1g", "--worker", "1c,1g",
		"--tensorboard", "--logdir", logDir, "--python", python,
		"--files", filepath.Join(c.Root, "examples", "mwms_keras.py"), "--output", "json", "--", "sh", "-c", program, python)
	runErr := &run.stderr

	// run prints the URL once TensorBoard registered.
	urlRE := regexp.MustCompile(`(application_\d+_\d+) TensorBoard: (http://\S+/)\n`)
	var m []string
	deadline := time.Now().Add(3 * time.Minute)
	for m = urlRE.FindStringSubmatch(runErr.String()); m == nil; m = urlRE.FindStringSubmatch(runErr.String()) {
		require.True(t, time.Now().Before(deadline), "no TensorBoard URL from run within 3m:\n%s", runErr.String())
		time.Sleep(300 * time.Millisecond)
	}
	appID, url := m[1], m[2]

	// TensorBoard serves the chief's summaries once training wrote them.
	deadline = time.Now().Add(3 * time.Minute)
	for {
		body, err := tryGet(url + "data/runs")
		if err == nil && strings.Contains(body, `"train"`) {
			break
		}
		require.True(t, time.Now().Before(deadline), "TensorBoard at %s lists no train run within 3m (%v, %q)\nrun: %s", url, err, body, runErr.String())
		time.Sleep(time.Second)
	}
	require.True(t, strings.Contains(httpGet(t, url), "<title>TensorBoard</title>"), "TensorBoard's own page at %s", url)

	// status and the web UI (headless chromium through the RM proxy) show the URL.
	out, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", appID)
	require.Equal(t, exitOK, code, errOut)
	require.Regexp(t, `(?m)^TensorBoard\s*:\s*`+regexp.QuoteMeta(url)+`$`, out)
	require.Regexp(t, `(?m)^tensorboard:0\s+running\s`, out)
	tracking := statusJSON(t, c, appID).TrackingURL
	owner := ownerQuery(t, tracking)
	rep := proxyStatus(t, tracking+strings.TrimPrefix(contract.StatusPath, "/")+owner)
	require.Equal(t, url, rep.TensorBoardURL)
	dom := headless(t, chromiumPath(t), "--dump-dom", tracking+owner)
	require.Contains(t, dom, `<a id="tensorboard" href="`+url+`">`)
	require.Contains(t, taskRow(t, dom, "tensorboard:0"), `data-state="running"`)

	require.NoError(t, run.finish())
	r := runJSON(t, run.stdout.String())
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	states := map[string]string{}
	for _, task := range r.Tasks {
		states[task.Task] = task.State
	}
	require.Equal(t, map[string]string{"chief:0": "succeeded", "worker:0": "succeeded", "tensorboard:0": "stopped"}, states,
		"TensorBoard is stopped once the chief succeeded")
	_, err := tryGet(url)
	require.Error(t, err, "TensorBoard no longer serves after the job")

	// TF_CONFIG: the cluster is the chief and the worker; TensorBoard is
	// only in its own "task", as the evaluator is.
	logs := appLogs(t, c, appID, 4)
	require.Regexp(t, `(?m)TF_CONFIG=\{"cluster":\{"chief":\["[^"]+"\],"worker":\["[^"]+"\]\},"task":\{"type":"chief","index":0\}\}$`, logs)
	require.Regexp(t, `tensorboard:0 at \S+, TF_CONFIG=\{"cluster":\{"chief":\["[^"]+"\],"worker":\["[^"]+"\]\},"task":\{"type":"tensorboard","index":0\}\}`, logs)
	require.Contains(t, logs, "tfyarn task tensorboard:0: the AM stops this task")
	requireNoContainerProcess(t, appID)
}
