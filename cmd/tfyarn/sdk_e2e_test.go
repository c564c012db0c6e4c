//go:build e2e

package main

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// importTfyarn is a task that imports tfyarn's Python package with the system's python3, no
// environment shipped: the launcher's copy, from a directory of the task's working directory.
const importTfyarn = `python3 -c "import os, tfyarn; assert tfyarn.__file__.startswith(os.getcwd() + '/'), tfyarn.__file__; print('tfyarn', tfyarn.__version__)"`

// TestE2EPythonPackage: every task imports tfyarn with no change to its environment, on YARN.
func TestE2EPythonPackage(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	stdout, stderr, code := execTfyarn(t, c, bin, nil, "run", "--worker", "1c,256m", "--name", "e2e-sdk-import", "--output", "json", "--", "sh", "-c", importTfyarn)
	require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
	require.Equal(t, "SUCCEEDED", runJSON(t, stdout).FinalStatus)
}
