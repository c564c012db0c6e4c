package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// dockerCLI runs the configured docker CLI against the cluster's daemon
// with a deadline (0: none, for docker wait) and returns its standard output.
func dockerCLI(c *config, timeout time.Duration, args ...string) (string, error) {
	if err := rootOnlyPath(c.DockerBinary); err != nil {
		return "", fail(exitInvalidConfig, "docker.binary: %v", err)
	}
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, c.DockerBinary, append([]string{"--host", c.DockerHost}, args...)...)
	// No credentials, no configuration of the caller's: an empty config directory.
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "DOCKER_CONFIG=/nonexistent/tfyarn-container-executor"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		return "", fail(exitDockerFailed, "docker %s did not finish within %v", args[0], timeout)
	}
	if err != nil {
		why := dockerReason(stderr.String())
		if why == "" {
			why = err.Error()
		}
		return stdout.String(), fail(exitDockerFailed, "docker %s failed: %s", args[0], why)
	}
	return stdout.String(), nil
}

// dockerReason is docker's reason in its stderr: the last line that is not
// its advice to read the help ("See 'docker run --help'."), shortened, and
// without the "docker: " before it.
func dockerReason(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "See 'docker ") || strings.HasPrefix(l, "Run 'docker ") {
			continue
		}
		l = strings.TrimPrefix(l, "docker: ")
		if len(l) > 300 {
			l = l[:300] + "..."
		}
		return l
	}
	return ""
}

// readDockerFile reads a command file of root's from the NodeManager's
// private directory.
func readDockerFile(p string) (*dockerCommand, error) {
	b, err := readPrivate(p)
	if err != nil {
		return nil, fail(exitInvalidDocker, "docker command file: %v", err)
	}
	return parseDockerCommand(b)
}

// runLaunchDocker starts the container's script in its image: the same
// directories as a plain launch, then docker run (detached), the
// container's main process as the pid file, and docker wait for its status.
func runLaunchDocker(c *config, r *request, a *account, nmGID int) (int, error) {
	d, err := readDockerFile(r.DockerFile)
	if err != nil {
		return 0, err
	}
	if d.Command != "run" {
		return 0, fail(exitInvalidDocker, "docker launch with a %q command file, want run", clip(d.Command))
	}
	// Checked before anything is created (mount sources the launch itself creates, the
	// container's log directories, resolved as far as they exist), and again after.
	if _, err := checkRun(c, d, r, a, resolveExisting); err != nil {
		return 0, err
	}
	if env := d.Args["environ"]; len(env) == 1 && env[0] != "" {
		b, err := readPrivate(env[0])
		if err != nil {
			return 0, fail(exitInvalidDocker, "docker environment file: %v", err)
		}
		if err := parseEnvFile(b); err != nil {
			return 0, err
		}
	}
	if _, err := prepareLaunch(r, a, nmGID); err != nil {
		return 0, err
	}
	spec, err := checkRun(c, d, r, a, filepath.EvalSymlinks)
	if err != nil {
		return 0, err
	}
	// Mount the objects just checked, not the paths: a user may swap a link into his own
	// directory between the check and Docker's mount.
	pinned, err := pinMounts(c, spec)
	if err != nil {
		return 0, err
	}
	defer closeAll(pinned)
	unstage, err := stageMounts(spec, pinned, filepath.Dir(r.DockerFile)+"/mounts")
	if err != nil {
		return 0, err
	}
	defer unstage()
	_, err = dockerCLI(c, 2*time.Minute, spec.argv()...)
	unstage() // the started container has its own mounts
	if err != nil {
		return 0, fail(exitCannotExecute, "launch of %s in image %s: %v", r.ContainerID, spec.Image, err)
	}
	pid, err := containerPID(c, r.ContainerID)
	if err != nil {
		return 0, err
	}
	if pid > 0 {
		if err := writePIDFile(r.PIDFile, pid); err != nil {
			_, _ = dockerCLI(c, time.Minute, "rm", "--force", "--", r.ContainerID)
			return 0, fail(exitSetupFailed, "launch: pid file: %v", err)
		}
	}
	out, err := dockerCLI(c, 0, "wait", "--", r.ContainerID)
	// The container is over: remove it here. The NodeManager's own removal (inspect, then rm,
	// each through a command file in the container's private directory) races with its
	// deletion of that directory and mostly finds the file gone; the test cluster never
	// allows delayed removal (keeping exited containers for debugging).
	_, _ = dockerCLI(c, time.Minute, "rm", "--force", "--", r.ContainerID)
	if err != nil {
		return 0, err
	}
	code, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || code < 0 || code > 255 {
		return 0, fail(exitDockerFailed, "docker wait for %s said %q, not an exit status", r.ContainerID, clip(strings.TrimSpace(out)))
	}
	return code, nil
}

// containerPID waits (30 s at most) for the started container's main
// process and returns its pid on this host; 0 when it has already exited.
func containerPID(c *config, name string) (int, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := dockerCLI(c, time.Minute, "inspect", "--format={{.State.Pid}} {{.State.Status}}", "--", name)
		if err != nil {
			return 0, err
		}
		var pid int
		var status string
		if _, err := fmt.Sscan(out, &pid, &status); err != nil {
			return 0, fail(exitDockerFailed, "docker inspect of %s said %q", name, clip(out))
		}
		if pid > 0 {
			return pid, nil
		}
		if status == "exited" || status == "dead" {
			return 0, nil
		}
		if time.Now().After(deadline) {
			return 0, fail(exitDockerFailed, "container %s had no process 30s after docker run (status %s)", name, status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runRunDocker runs a docker command other than run for the NodeManager
// (inspect, stop, kill, rm, start) and passes on docker's standard output.
func runRunDocker(c *config, r *request, stdout io.Writer) (int, error) {
	d, err := readDockerFile(r.DockerFile)
	if err != nil {
		return 0, err
	}
	if d.Command == "run" {
		return 0, fail(exitInvalidDocker, "docker run only through a container launch")
	}
	argv, err := checkControlFile(d, r.DockerFile)
	if err != nil {
		return 0, err
	}
	out, err := dockerCLI(c, 2*time.Minute, argv...)
	var f *failure
	if errors.As(err, &f) && d.Command == "rm" && strings.Contains(f.msg, "No such container") {
		return 0, nil // already gone: what rm wanted
	}
	if err != nil {
		return 0, err
	}
	_, _ = io.WriteString(stdout, out)
	return 0, nil
}

// resolveExisting resolves p's links as far as p exists and appends the
// rest: where a path the launch will create would lead.
func resolveExisting(p string) (string, error) {
	rest := ""
	for cur := p; ; cur = filepath.Dir(cur) {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) || cur == "/" {
			return "", err
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

// checkControlFile is checkControl for a command file at path, which must lie
// in the private directory of the container it names.
func checkControlFile(d *dockerCommand, path string) ([]string, error) {
	argv, err := checkControl(d)
	if err != nil {
		return nil, err
	}
	if name, _ := d.one("name"); name != filepath.Base(filepath.Dir(path)) {
		return nil, fail(exitInvalidDocker, "docker %s names %s, but its command file is in %s's directory", d.Command, clip(name), clip(filepath.Base(filepath.Dir(path))))
	}
	return argv, nil
}
