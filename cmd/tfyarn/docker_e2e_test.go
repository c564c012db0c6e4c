//go:build e2e

package main

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// Issue 20: on the cluster whose NodeManagers allow YARN's Docker runtime (LinuxContainerExecutor,
// the test cluster's helper, its own Docker daemon and the test image), `run --image` runs the
// tasks in the image as the submitting user on the host network, `--env` ships a venv that runs
// inside the image, an image from an untrusted registry fails with the helper's reason, and an
// image name that cannot be valid is refused before anything is submitted.
//
//	go test -tags e2e -run '^TestE2EDockerImage$' ./cmd/tfyarn/
func TestE2EDockerImage(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.RequireDocker(t)
	image := c.DockerImage()
	alice := []string{"HADOOP_USER_NAME=alice", "XDG_CACHE_HOME=" + t.TempDir()}
	u, err := user.Lookup("alice")
	require.NoError(t, err)
	// Only inside the image: the marker file (the host has none), the image's python 3.11 as
	// python3, the user's own uid; the launcher's port is the host's (host networking).
	inImage := `grep -q 'tfyarn test image' /etc/tfyarn-test-image && python3 -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' && test "$(id -u)" = ` + u.Uid + ` && test -n "$TFYARN_TASK_PORT"`

	t.Run("task_in_image", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--image", image, "--worker", "2x1c,256m", "--", "sh", "-c", inImage)
		require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
		require.Equal(t, "SUCCEEDED", runJSON(t, stdout).FinalStatus)
	})
	t.Run("same_program_outside_image_fails", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--worker", "1c,256m", "--", "sh", "-c", inImage)
		require.Equal(t, exitJobFailed, code, "stdout: %s\nstderr: %s", stdout, stderr)
	})
	t.Run("env_over_image", func(t *testing.T) {
		t.Parallel()
		// A venv of Debian's python3 (/usr/bin/python3.11 here and in the image): it runs
		// inside the image, whose interpreter it needs at the same path.
		venv := filepath.Join(t.TempDir(), "venv")
		out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", venv).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.NoError(t, os.WriteFile(filepath.Join(venv, "lib", "python3.11", "site-packages", "tfyarn_docker_probe.py"), []byte("VALUE = 'from-the-env'\n"), 0o644))
		program := inImage + ` && test -f /etc/tfyarn-test-image && python -c 'import sys, tfyarn_docker_probe; assert tfyarn_docker_probe.VALUE == "from-the-env"; assert sys.prefix.endswith("/env"), sys.prefix'`
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--image", image, "--env", venv, "--worker", "1c,256m", "--", "sh", "-c", program)
		require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
	})
	t.Run("mounts", func(t *testing.T) {
		t.Parallel()
		// The cluster allows read-only mounts from below its docker-mounts directory only.
		src := filepath.Join(c.Dir, "docker-mounts", "e2e-"+filepath.Base(t.TempDir()))
		require.NoError(t, os.MkdirAll(src, 0o755))
		t.Cleanup(func() { os.RemoveAll(src) })
		require.NoError(t, os.WriteFile(filepath.Join(src, "data.txt"), []byte("mounted-data\n"), 0o644))
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--image", image, "--mount", src+":/data:ro",
			"--worker", "1c,256m", "--", "sh", "-c", inImage+` && grep -q mounted-data /data/data.txt && ! touch /data/x`)
		require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)

		stdout, stderr, code = execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--image", image, "--mount", "/etc:/hostetc:ro",
			"--worker", "1c,256m", "--", "true")
		require.Equal(t, exitJobFailed, code, "stdout: %s\nstderr: %s", stdout, stderr)
		require.Contains(t, runJSON(t, stdout).Diagnostics, "docker mount of /etc is not allowed read-only by the cluster")
	})
	t.Run("killed_and_restarted_in_image", func(t *testing.T) {
		t.Parallel()
		// The first attempt's program is killed (SIGKILL, exit 137) inside the image; the
		// restarted task runs in the image again and succeeds.
		program := inImage + ` && if [ "$TFYARN_TASK_ATTEMPT" = 0 ]; then kill -9 $$; fi`
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--image", image, "--max-restarts", "1",
			"--worker", "1c,256m", "--", "sh", "-c", program)
		require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		require.Equal(t, 1, r.Tasks[0].Attempt, "the task ran a second time: %+v", r.Tasks[0])
	})
	t.Run("untrusted_registry", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--image", "registry.example.com/ml/tf:2.15", "--worker", "1c,256m", "--", "true")
		require.Equal(t, exitJobFailed, code, "stdout: %s\nstderr: %s", stdout, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "FAILED", r.FinalStatus)
		require.Contains(t, r.Diagnostics, "not among the cluster's trusted registries", "the NodeManager's reason reaches the job's diagnostics")
	})
	t.Run("invalid_image_name", func(t *testing.T) {
		t.Parallel()
		_, stderr, code := execTfyarnFor(t, c, bin, time.Minute, alice, "run", "--image", "Registry/UPPER case", "--worker", "1c,256m", "--", "true")
		require.Equal(t, exitUsage, code, stderr)
		require.Contains(t, stderr, "is not a valid Docker image name")
		require.NotContains(t, stderr, "submitted")
	})
}
