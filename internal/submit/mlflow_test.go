package submit

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/mlflow"
	"github.com/tfyarn/tfyarn/jobreport"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestTasksGetTheRun: every task's environment gets the run's variables and MLflow's TLS
// settings; the credentials go among the secret variables only (sealed like --secret-env),
// never into the job's environment, which the job file and launch contexts carry.
func TestTasksGetTheRun(t *testing.T) {
	t.Setenv(mlflow.EnvToken, "tok")
	t.Setenv(mlflow.EnvUsername, "alice")
	t.Setenv(mlflow.EnvPassword, "pw")
	t.Setenv(mlflow.EnvInsecureTLS, "true")
	t.Setenv(mlflow.EnvServerCert, "/etc/ssl/mlflow-ca.pem")
	t.Setenv(mlflow.EnvClientCert, "")
	userEnv := map[string]string{"A": "1", mlflow.EnvToken: "given with --setenv"}
	s := &Submission{job: Job{Job: taskspec.Job{Env: userEnv}, SecretEnv: map[string]string{"S": "2"}}}
	s.giveTasksTheRun(mlflow.Config{TrackingURI: "http://mlflow:5000"}, mlflow.Run{ID: "r1", ExperimentID: "7"})
	require.Equal(t, map[string]string{
		"A": "1", mlflow.EnvTrackingURI: "http://mlflow:5000", mlflow.EnvRunID: "r1", mlflow.EnvExperiment: "7",
		mlflow.EnvInsecureTLS: "true", mlflow.EnvServerCert: "/etc/ssl/mlflow-ca.pem",
	}, s.job.Env)
	require.Equal(t, map[string]string{"S": "2", mlflow.EnvToken: "tok", mlflow.EnvUsername: "alice", mlflow.EnvPassword: "pw"}, s.job.SecretEnv)
	require.Equal(t, "given with --setenv", userEnv[mlflow.EnvToken], "the caller's map is not changed")
}

// TestClientEndsARunTheAMCouldNot: an AM killed before it logged the job's end (the fault a fake
// server stands in for: the run still RUNNING, no tfyarn.final_status) leaves it to `run`,
// which sets the status and the tags; a run the AM ended is left alone.
func TestClientEndsARunTheAMCouldNot(t *testing.T) {
	for _, tc := range []struct {
		run   string
		calls []string
	}{
		{`{"run": {"info": {"run_id": "r1", "status": "RUNNING"}, "data": {}}}`,
			[]string{"GET /api/2.0/mlflow/runs/get", "POST /api/2.0/mlflow/runs/log-batch", "POST /api/2.0/mlflow/runs/update KILLED"}},
		{`{"run": {"info": {"run_id": "r1", "status": "KILLED"}, "data": {"tags": [{"key": "tfyarn.final_status", "value": "KILLED"}]}}}`,
			[]string{"GET /api/2.0/mlflow/runs/get"}},
	} {
		var calls []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			call := r.Method + " " + r.URL.Path
			if r.URL.Path == "/api/2.0/mlflow/runs/update" {
				var u struct{ Status string }
				require.NoError(t, json.NewDecoder(r.Body).Decode(&u))
				call += " " + u.Status
			}
			calls = append(calls, call)
			if r.URL.Path == "/api/2.0/mlflow/runs/get" {
				_, _ = io.WriteString(w, tc.run)
				return
			}
			_, _ = io.WriteString(w, `{}`)
		}))
		c, err := mlflow.New(mlflow.Config{TrackingURI: srv.URL})
		require.NoError(t, err)
		s := &Submission{tracker: &mlflowTracker{client: c, run: mlflow.Run{ID: "r1"}}}
		line := s.FinishTracking(context.Background(), &jobreport.Result{FinalStatus: "KILLED", Diagnostics: "killed by the user"})
		require.Empty(t, line)
		require.Equal(t, tc.calls, calls)
		srv.Close()
		// The server gone by then: one line says what tracking lost.
		line = s.FinishTracking(context.Background(), &jobreport.Result{FinalStatus: "KILLED"})
		require.Regexp(t, `^MLflow tracking lost: the run r1's end \(KILLED\): .*connection refused`, line)
	}
}

// TestClientLeavesAJoinedRunsStatus: for a joined run (MLFLOW_RUN_ID) the client logs the end the
// AM could not (the final-status tag still UNDEFINED) but never ends the run; an end the AM logged
// (the tag set) is left alone; a failed submission tags the diagnostics only.
func TestClientLeavesAJoinedRunsStatus(t *testing.T) {
	for _, tc := range []struct {
		run   string
		calls []string
	}{
		{`{"run": {"info": {"run_id": "r1", "status": "RUNNING"}, "data": {"tags": [{"key": "tfyarn.final_status", "value": "UNDEFINED"}]}}}`,
			[]string{"GET /api/2.0/mlflow/runs/get", "POST /api/2.0/mlflow/runs/log-batch"}},
		{`{"run": {"info": {"run_id": "r1", "status": "RUNNING"}, "data": {"tags": [{"key": "tfyarn.final_status", "value": "KILLED"}]}}}`,
			[]string{"GET /api/2.0/mlflow/runs/get"}},
	} {
		var calls []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls = append(calls, r.Method+" "+r.URL.Path)
			if r.URL.Path == "/api/2.0/mlflow/runs/get" {
				_, _ = io.WriteString(w, tc.run)
				return
			}
			_, _ = io.WriteString(w, `{}`)
		}))
		c, err := mlflow.New(mlflow.Config{TrackingURI: srv.URL})
		require.NoError(t, err)
		s := &Submission{tracker: &mlflowTracker{client: c, run: mlflow.Run{ID: "r1"}, joined: true}}
		require.Empty(t, s.FinishTracking(context.Background(), &jobreport.Result{FinalStatus: "KILLED"}))
		require.Equal(t, tc.calls, calls)
		calls = nil
		s.failTracking(errors.New("refused"))
		require.Equal(t, []string{"POST /api/2.0/mlflow/runs/log-batch"}, calls)
		require.True(t, s.jobMLflow().Joined, "the job file tells the AM the run is joined")
		srv.Close()
	}
	doc := strings.Join(strings.Fields(clustertest.DocSection(t, "## A job's MLflow run")), " ")
	require.Contains(t, doc, "A joined run's status is its owner's: tfyarn logs the job's end into it (tags, metrics, artifacts) but leaves it `RUNNING`; its `tfyarn.final_status` is `UNDEFINED` until the job ends.")
}
