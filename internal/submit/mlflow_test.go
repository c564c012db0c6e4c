package submit

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/mlflow"
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
