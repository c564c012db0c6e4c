package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunMLflowRefusals: --mlflow's mistakes are refused in one line, exit 2, before any RPC
// (the configuration names a dead RM) and before any tracking call.
func TestRunMLflowRefusals(t *testing.T) {
	conf := deadConf(t)
	for _, tc := range []struct {
		uri  string
		args []string
		want string
	}{
		{"", []string{"--mlflow"}, "tfyarn: --mlflow: MLFLOW_TRACKING_URI is not set: export the tracking server's URL (http://host:port) first\n"},
		{"http://127.0.0.1:1", []string{"--mlflow-experiment", "e"}, "tfyarn: --mlflow-experiment needs --mlflow\n"},
		{"http://127.0.0.1:1", []string{"--mlflow", "--local"}, "tfyarn: --mlflow is for jobs on YARN; leave it out with --local\n"},
		{"file:///tmp/mlruns", []string{"--mlflow"}, "tfyarn: --mlflow: MLFLOW_TRACKING_URI \"file:///tmp/mlruns\" is not an http(s) URL of a tracking server: give one such as http://host:5000\n"},
	} {
		t.Run(strings.Join(append([]string{tc.uri}, tc.args...), " "), func(t *testing.T) {
			t.Setenv("MLFLOW_TRACKING_URI", tc.uri)
			args := append([]string{"--conf-dir", conf, "run", "--worker", "1c"}, tc.args...)
			stdout, stderr, code := runCLI(t, append(args, "--", "true")...)
			require.Equal(t, exitUsage, code, stderr)
			require.Empty(t, stdout)
			require.Equal(t, tc.want, stderr)
		})
	}
	t.Setenv("MLFLOW_TRACKING_URI", "https://127.0.0.1:1")
	t.Setenv("MLFLOW_TRACKING_SERVER_CERT_PATH", "/nonexistent/ca.pem")
	_, stderr, code := runCLI(t, "--conf-dir", conf, "run", "--mlflow", "--worker", "1c", "--", "true")
	require.Equal(t, exitUsage, code, stderr)
	require.Contains(t, stderr, "--mlflow: MLFLOW_TRACKING_SERVER_CERT_PATH: open /nonexistent/ca.pem: no such file or directory")
	require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
}
