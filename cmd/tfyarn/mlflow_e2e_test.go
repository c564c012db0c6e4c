//go:build e2e

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// mlflowChief is the job's program: chief:0 logs with MLflow's own API into the job's run
// (MLFLOW_RUN_ID, as mlflow.autolog() would), after checking that its token arrived (by its
// hash: the value itself would be on its command line); its first attempt fails, and the job's
// restart logs into the same run. The worker only checks the token.
const mlflowChief = `import hashlib, os, sys
token = os.environ.get("MLFLOW_TRACKING_TOKEN", "")
if hashlib.sha256(token.encode()).hexdigest() != sys.argv[1]:
    print("wrong or no MLFLOW_TRACKING_TOKEN", file=sys.stderr)
    sys.exit(3)
if os.environ["TFYARN_TASK"] == "chief:0":
    run_id, experiment_id = os.environ["MLFLOW_RUN_ID"], os.environ["MLFLOW_EXPERIMENT_ID"]
    import mlflow
    run = mlflow.start_run()  # MLflow's: the run MLFLOW_RUN_ID names (it then unsets the variable)
    assert (run.info.run_id, run.info.experiment_id) == (run_id, experiment_id), (run.info, run_id, experiment_id)
    restart = int(os.environ.get("TFYARN_RESTART", "0"))
    mlflow.log_metric("chief_attempt", restart, step=restart)
    if restart == 0:
        sys.exit(5)  # the job restarts (--max-restarts 1): the next chief logs into the same run
    mlflow.log_metric("chief_accuracy", 0.75, step=3)
    mlflow.log_param("chief_batch_size", 64)
    print("chief logged into", run.info.run_id)
`

// TestE2EMLflow: run --mlflow against a real MLflow tracking server (pinned, from PyPI,
// started on loopback): the job's params and tags, the chief's own metric logged with MLflow's
// API, status FINISHED, the AM's artifacts; a failed job's run FAILED with the diagnostics; a
// killed one KILLED; a server that is down costs the job only its tracking, said in one line;
// no MLFLOW_TRACKING_URI is refused before anything is created. The token reaches the tasks
// and never the logs.
//
//	go test -tags e2e -run E2EMLflow ./cmd/tfyarn/
func TestE2EMLflow(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	// Bad input first: no cluster contact, nothing created.
	stdout, stderr, code := execTfyarn(t, c, bin, []string{"MLFLOW_TRACKING_URI="}, "run", "--mlflow", "--worker", "1c,256m", "--", "true")
	require.Equal(t, exitUsage, code, stderr)
	require.Empty(t, stdout)
	require.Equal(t, "tfyarn: --mlflow: MLFLOW_TRACKING_URI is not set: export the tracking server's URL (http://host:port) first\n", stderr)

	srv := clustertest.StartMLflow(t)
	token := "tfyarn-mlflow-token-" + randomHex(t) + randomHex(t)
	sum := sha256.Sum256([]byte(token))
	tracking := []string{"MLFLOW_TRACKING_URI=" + srv.URL, "MLFLOW_TRACKING_TOKEN=" + token}
	script := filepath.Join(t.TempDir(), "mlflow_chief.py")
	require.NoError(t, os.WriteFile(script, []byte(mlflowChief), 0o644))

	t.Run("finished", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarnFor(t, c, bin, 4*time.Minute, tracking, "run", "--mlflow", "--mlflow-experiment", "e2e-mlflow",
			"--name", "e2e-mlflow", "--max-restarts", "1", "--chief", "1c,768m", "--worker", "1c,256m", "--python", srv.Python, "--output", "json",
			script, "--", hex.EncodeToString(sum[:]))
		require.Equal(t, exitOK, code, stderr)
		r := runJSON(t, stdout)
		runID := mlflowRunOf(t, stderr, r.AppID)
		run := getRun(t, srv.URL, runID)
		require.Equal(t, "FINISHED", run.Info.Status)
		require.Equal(t, "1c,768m", run.param("tfyarn.task.chief"))
		require.Equal(t, "1c,256m", run.param("tfyarn.task.worker"))
		require.Equal(t, "default", run.param("tfyarn.queue"))
		require.Equal(t, "tensorflow", run.param("tfyarn.framework"))
		require.Equal(t, "64", run.param("chief_batch_size"), "the chief's own param")
		require.Equal(t, r.AppID, run.tag("tfyarn.application_id"))
		require.Equal(t, "SUCCEEDED", run.tag("tfyarn.final_status"))
		require.Contains(t, run.tag("tfyarn.tracking_url"), "/proxy/"+r.AppID+"/")
		require.Equal(t, 0.75, run.metric("chief_accuracy"), "the chief's own metric")
		require.Equal(t, []float64{0, 1}, metricHistory(t, srv.URL, runID, "chief_attempt"), "both attempts logged into the one run")
		require.Equal(t, 1.0, run.metric("tfyarn.restarts"))
		require.Equal(t, "1", run.param("tfyarn.max_restarts"))
		require.Greater(t, run.metric("tfyarn.wall_seconds"), 0.0)
		require.Contains(t, run.metrics(), "tfyarn.chief_0.peak_rss_mib")
		require.ElementsMatch(t, []string{"tfyarn/history.json", "tfyarn/am.log"}, listArtifacts(t, srv.URL, runID, "tfyarn"))
		history := artifact(t, srv.URL, run, "tfyarn/history.json")
		require.Contains(t, history, r.AppID)
		require.NotContains(t, history, token, "the job's history")
		amLog := artifact(t, srv.URL, run, "tfyarn/am.log")
		require.Contains(t, amLog, "tfyarn am: ")
		require.NotContains(t, amLog, token, "the AM's log")
		// docs/mlflow.md's table: every key it says is always logged is in the run.
		doc := clustertest.DocSection(t, "## A job's MLflow run")
		for kind, keys := range map[string][]string{
			"param":  {"tfyarn.task.chief", "tfyarn.framework", "tfyarn.queue", "tfyarn.max_restarts", "tfyarn.am_attempts", "tfyarn.command"},
			"tag":    {"tfyarn.application_id", "tfyarn.user", "tfyarn.version", "tfyarn.tracking_url", "tfyarn.final_status"},
			"metric": {"tfyarn.wall_seconds", "tfyarn.all_tasks_running_seconds", "tfyarn.restarts", "tfyarn.chief_0.peak_rss_mib", "tfyarn.chief_0.cpu_seconds"},
		} {
			for _, k := range keys {
				require.Contains(t, doc, strings.Replace(k, "chief_0", "TASK", 1), "docs/mlflow.md names the %s", kind)
				switch kind {
				case "param":
					require.NotEmpty(t, run.param(k), k)
				case "tag":
					require.NotEmpty(t, run.tag(k), k)
				default:
					require.Contains(t, run.metrics(), k)
				}
			}
		}
		exp := getExperiment(t, srv.URL, "e2e-mlflow")
		require.Equal(t, exp, run.Info.ExperimentID)
		logs := appLogs(t, c, r.AppID, 3)
		require.Contains(t, logs, "chief logged into "+runID)
		require.NotContains(t, logs, token, "the logs (launch scripts, the AM's and the tasks' output)")
		require.NotContains(t, stderr, token)
	})
	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, tracking, "run", "--mlflow", "--name", "e2e-mlflow-failed",
			"--worker", "1c,256m", "--output", "json", "--", "sh", "-c", "echo boom >&2; exit 3")
		require.Equal(t, exitJobFailed, code, stderr)
		r := runJSON(t, stdout)
		run := getRun(t, srv.URL, mlflowRunOf(t, stderr, r.AppID))
		require.Equal(t, "FAILED", run.Info.Status)
		require.Equal(t, "FAILED", run.tag("tfyarn.final_status"))
		require.Contains(t, run.tag("tfyarn.diagnostics"), "exit code 3")
		require.Equal(t, getExperiment(t, srv.URL, "e2e-mlflow-failed"), run.Info.ExperimentID, "the experiment defaults to --name")
	})
	t.Run("joined", func(t *testing.T) {
		t.Parallel()
		// The caller's own run (a notebook's, a pipeline step's), with a param of its own.
		var created struct {
			Run struct {
				Info struct {
					RunID string `json:"run_id"`
				} `json:"info"`
			} `json:"run"`
		}
		mlflowPost(t, srv.URL, "/api/2.0/mlflow/runs/create", `{"experiment_id": "0"}`, &created)
		id := created.Run.Info.RunID
		mlflowPost(t, srv.URL, "/api/2.0/mlflow/runs/log-parameter", `{"run_id": "`+id+`", "key": "notebook_param", "value": "x"}`, nil)
		stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, append(tracking, "MLFLOW_RUN_ID="+id), "run", "--mlflow",
			"--name", "e2e-mlflow-joined", "--worker", "1c,256m", "--output", "json", "--", "sh", "-c", `test "$MLFLOW_RUN_ID" = `+id)
		require.Equal(t, exitOK, code, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, id, mlflowRunOf(t, stderr, r.AppID))
		run := getRun(t, srv.URL, id)
		require.Equal(t, "RUNNING", run.Info.Status, "a joined run's status is its owner's")
		require.Equal(t, "SUCCEEDED", run.tag("tfyarn.final_status"), "the job's end is logged into it")
		require.Equal(t, r.AppID, run.tag("tfyarn.application_id"))
		require.Equal(t, "1c,256m", run.tag("tfyarn.task.worker"), "a joined run gets the job's description as tags")
		require.Equal(t, "x", run.param("notebook_param"))
	})
	t.Run("killed", func(t *testing.T) {
		t.Parallel()
		// YARN's lifetime timeout: the ResourceManager kills the application.
		stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, tracking, "run", "--mlflow", "--name", "e2e-mlflow-killed",
			"--worker", "1c,256m", "--timeout", "15s", "--output", "json", "--", "sleep", "600")
		require.Equal(t, exitJobFailed, code, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "KILLED", r.FinalStatus)
		run := getRun(t, srv.URL, mlflowRunOf(t, stderr, r.AppID))
		require.Equal(t, "KILLED", run.Info.Status, stderr)
	})
	t.Run("server down", func(t *testing.T) {
		t.Parallel()
		down := []string{"MLFLOW_TRACKING_URI=" + clustertest.FreeLoopbackURL(t)}
		stdout, stderr, code := execTfyarnFor(t, c, bin, 3*time.Minute, down, "run", "--mlflow", "--name", "e2e-mlflow-down",
			"--worker", "1c,256m", "--output", "json", "--", "sh", "-c", `test -z "$MLFLOW_RUN_ID"`)
		require.Equal(t, exitOK, code, stderr)
		require.Equal(t, "SUCCEEDED", runJSON(t, stdout).FinalStatus)
		var lost []string
		for _, l := range strings.Split(stderr, "\n") {
			if strings.Contains(l, "MLflow") {
				lost = append(lost, l)
			}
		}
		require.Len(t, lost, 1, stderr)
		require.Regexp(t, `^MLflow tracking lost: http://127\.0\.0\.1:\d+: .*connection refused; the job runs without its MLflow run`, lost[0])
	})
}

// mlflowRunOf is the run id run printed for the application ("APP MLflow run ID (experiment N)").
func mlflowRunOf(t *testing.T, stderr, appID string) string {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(l, appID+" MLflow run "); ok {
			id, _, _ := strings.Cut(rest, " ")
			return id
		}
	}
	t.Fatalf("run printed no MLflow run for %s:\n%s", appID, stderr)
	return ""
}

// mlflowRun is a run as the tracking server's REST API returns it (read here without
// internal/mlflow: the assertions do not go through the code under test).
type mlflowRun struct {
	Info struct {
		Status       string `json:"status"`
		ExperimentID string `json:"experiment_id"`
		ArtifactURI  string `json:"artifact_uri"`
	} `json:"info"`
	Data struct {
		RawParams  []map[string]any `json:"params"`
		RawTags    []map[string]any `json:"tags"`
		RawMetrics []map[string]any `json:"metrics"`
	} `json:"data"`
}

func find(list []map[string]any, key string) any {
	for _, kv := range list {
		if kv["key"] == key {
			return kv["value"]
		}
	}
	return nil
}

func (r mlflowRun) param(k string) string   { s, _ := find(r.Data.RawParams, k).(string); return s }
func (r mlflowRun) tag(k string) string     { s, _ := find(r.Data.RawTags, k).(string); return s }
func (r mlflowRun) metric(k string) float64 { f, _ := find(r.Data.RawMetrics, k).(float64); return f }
func (r mlflowRun) metrics() []string {
	var keys []string
	for _, m := range r.Data.RawMetrics {
		keys = append(keys, m["key"].(string))
	}
	return keys
}

func mlflowGet(t *testing.T, base, path string, q url.Values, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", base+path+"?"+q.Encode(), nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, body)
	require.NoError(t, json.Unmarshal(body, out), "%s", body)
}

func getRun(t *testing.T, base, runID string) mlflowRun {
	t.Helper()
	var got struct {
		Run mlflowRun `json:"run"`
	}
	mlflowGet(t, base, "/api/2.0/mlflow/runs/get", url.Values{"run_id": {runID}}, &got)
	return got.Run
}

func getExperiment(t *testing.T, base, name string) string {
	t.Helper()
	var got struct {
		Experiment struct {
			ID string `json:"experiment_id"`
		} `json:"experiment"`
	}
	mlflowGet(t, base, "/api/2.0/mlflow/experiments/get-by-name", url.Values{"experiment_name": {name}}, &got)
	return got.Experiment.ID
}

func listArtifacts(t *testing.T, base, runID, dir string) []string {
	t.Helper()
	var got struct {
		Files []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	mlflowGet(t, base, "/api/2.0/mlflow/artifacts/list", url.Values{"run_id": {runID}, "path": {dir}}, &got)
	var paths []string
	for _, f := range got.Files {
		paths = append(paths, f.Path)
	}
	return paths
}

// metricHistory is every value logged of a run's metric, by step.
func metricHistory(t *testing.T, base, runID, key string) []float64 {
	t.Helper()
	var got struct {
		Metrics []struct {
			Value float64 `json:"value"`
			Step  int64   `json:"step"`
		} `json:"metrics"`
	}
	mlflowGet(t, base, "/api/2.0/mlflow/metrics/get-history", url.Values{"run_id": {runID}, "metric_key": {key}}, &got)
	sort.Slice(got.Metrics, func(i, j int) bool { return got.Metrics[i].Step < got.Metrics[j].Step })
	var values []float64
	for _, m := range got.Metrics {
		values = append(values, m.Value)
	}
	return values
}

// artifact is the content of one of the run's artifacts, read through the server's proxy.
func artifact(t *testing.T, base string, run mlflowRun, name string) string {
	t.Helper()
	dir, ok := strings.CutPrefix(run.Info.ArtifactURI, "mlflow-artifacts:/")
	require.True(t, ok, run.Info.ArtifactURI)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/2.0/mlflow-artifacts/artifacts/"+dir+"/"+name, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", name, body)
	return string(body)
}

func mlflowPost(t *testing.T, base, path, body string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, data)
	if out != nil {
		require.NoError(t, json.Unmarshal(data, out), "%s", data)
	}
}
