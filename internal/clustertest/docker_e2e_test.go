//go:build e2e

package clustertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Issue 20 item 1: the docker cluster's own Docker daemon holds the test image, built from Debian
// packages under the trusted registry, with the marker file, python3 and libstdc++; env.sh exports its name;
// the daemon made no bridge (host or no networking only).
//
//	go test -tags e2e -run '^TestE2EDockerTestImage$' ./internal/clustertest/
func TestE2EDockerTestImage(t *testing.T) {
	c := RequireDocker(t)
	image := c.DockerImage()
	require.True(t, strings.HasPrefix(image, "tfyarn.test/tfyarn-test-image:"), "the image is under the trusted registry tfyarn.test: %s", image)

	env, err := os.ReadFile(filepath.Join(c.Dir, "env.sh"))
	require.NoError(t, err)
	require.Contains(t, string(env), `export TFYARN_TEST_IMAGE="`+image+`"`)

	docker := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "/usr/bin/docker", append([]string{"--host", c.DockerHost()}, args...)...).CombinedOutput()
		require.NoError(t, err, "docker %s: %s", strings.Join(args, " "), out)
		return strings.TrimSpace(string(out))
	}
	out := docker("run", "--rm", "--network", "none", "--user", "2000:2000", image,
		"/bin/bash", "-c", "cat /etc/tfyarn-test-image && /usr/bin/python3 -c 'import sys; print(sys.version_info[:2])' && /sbin/ldconfig -p | grep -o 'libstdc++.so.6 '")
	require.Contains(t, out, "tfyarn test image")
	require.Contains(t, out, "(3, 11)", "the image's /usr/bin/python3 is Debian bookworm's 3.11 (the test venvs' interpreter, path and minor version)")
	require.Contains(t, out, "libstdc++.so.6", "the image has the C++ runtime TensorFlow's wheels link")

	// No bridge network: the daemon was started with --bridge=none.
	require.NotContains(t, docker("network", "ls", "--format", "{{.Name}}"), "bridge")
}
