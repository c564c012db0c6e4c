package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/jobreport"
)

// TestVersion: tfyarn version and tfyarn --version print one line naming
// the version, Go and the platform; --output json the same as keys. No
// cluster is asked.
func TestVersion(t *testing.T) {
	conf := deadConf(t)
	platform := runtime.GOOS + "/" + runtime.GOARCH
	for _, args := range [][]string{{"version"}, {"--version"}} {
		stdout, stderr, code := runCLI(t, append([]string{"--conf-dir", conf}, args...)...)
		require.Equal(t, exitOK, code, stderr)
		require.Empty(t, stderr)
		require.True(t, strings.HasPrefix(stdout, "tfyarn devel"), stdout)
		require.Contains(t, stdout, runtime.Version()+" "+platform+")")
		require.Equal(t, 1, strings.Count(stdout, "\n"), stdout)
	}
	stdout, stderr, code := runCLI(t, "--conf-dir", conf, "version", "--output", "json")
	require.Equal(t, exitOK, code, stderr)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.Equal(t, "devel", got["version"])
	require.Equal(t, runtime.Version(), got["go_version"])
	require.Equal(t, platform, got["platform"])
	require.Contains(t, got, "dirty")
}

// TestStatusWarnsOfAnotherVersion: status says in one line on stderr that
// a running job's AM is another tfyarn; nothing for the same one or an AM
// that does not say.
func TestStatusWarnsOfAnotherVersion(t *testing.T) {
	var stderr bytes.Buffer
	warnOtherVersion(&stderr, &jobreport.Report{TfyarnVersion: "v1.2.0"}, "v1.3.0")
	require.True(t, strings.HasPrefix(stderr.String(), "tfyarn: the job's ApplicationMaster is tfyarn v1.2.0 (this client is v1.3.0): "), stderr.String())
	require.Equal(t, 1, strings.Count(stderr.String(), "\n"))
	stderr.Reset()
	warnOtherVersion(&stderr, &jobreport.Report{TfyarnVersion: "v1.3.0"}, "v1.3.0")
	warnOtherVersion(&stderr, &jobreport.Report{}, "v1.3.0")
	require.Empty(t, stderr.String())
}
