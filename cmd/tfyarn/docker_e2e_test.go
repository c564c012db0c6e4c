//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/contract"
)

// Issue 20: on the cluster whose NodeManagers allow YARN's Docker runtime (LinuxContainerExecutor,
// the test cluster's helper, its own Docker daemon and the test image), `run --image` runs the
// tasks in the image as the submitting user on the host network (TensorFlow's
// MultiWorkerMirroredStrategy over three hosts, from a venv `--env` ships into the image), an image from an untrusted registry fails with the helper's reason, and an
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

	// The subtests but kill run two at a time once kill has ended, the longest first: they wait
	// for YARN and Docker more than they compute, and the MWMS job alone takes about as long as all
	// the others one after the other.
	var later []clustertest.Subtest
	later = append(later, clustertest.Subtest{Name: "mwms_in_image_on_three_hosts", Run: func(t *testing.T) {
		// TensorFlow MultiWorkerMirroredStrategy, three workers on three hosts, each in the image
		// (which has no TensorFlow): --env ships the TF venv of Debian's /usr/bin/python3
		// (scripts/tfenv.sh), which runs on the image's own /usr/bin/python3, the same Python
		// version (3.11) and path over the same libc. The interpreter the tasks print is the
		// image's own build (its sys.version, asked of the image directly), not the host's.
		venv, err := filepath.EvalSymlinks(filepath.Dir(filepath.Dir(tfPython(t, c))))
		require.NoError(t, err)
		out, err := exec.Command("/usr/bin/docker", "--host", c.DockerHost(), "run", "--rm", "--network", "none", image,
			"/usr/bin/python3", "-c", "import sys; print(sys.version)").CombinedOutput()
		require.NoError(t, err, "%s", out)
		imagePython := strings.TrimSpace(string(out))
		program := inImage + ` && cat /etc/tfyarn-test-image && python -c 'import sys; assert sys.prefix.endswith("/env"), sys.prefix; print("python", sys.version)'` +
			` && exec python mwms_keras.py --epochs 1 --steps-per-epoch 3`
		// Packed once per machine: root's own pack cache (~/.cache/tfyarn/packs), not a new one.
		start := time.Now()
		stdout, stderr, code := execTfyarnFor(t, c, bin, 10*time.Minute, []string{"HADOOP_USER_NAME=alice"}, "run", "--output", "json", "--image", image, "--env", venv,
			"--worker", "3x1c,1g", "--spread", "worker", "--files", filepath.Join(c.Root, "examples", "mwms_keras.py"), "--", "sh", "-c", program)
		require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		t.Logf("MWMS in the image: %.1fs; %s", time.Since(start).Seconds(), strings.SplitN(stderr, "\n", 2)[0])
		hosts := map[string]bool{}
		for _, task := range r.Tasks {
			hosts[task.Host] = true
		}
		require.Len(t, hosts, 3, "three workers on three hosts: %+v", r.Tasks)
		m := regexp.MustCompile(`(?m)^\[worker:0\] TF_CONFIG=(\{.*\})$`).FindStringSubmatch(stderr)
		require.NotNil(t, m, "worker:0's TF_CONFIG in its live output")
		var tfConfig struct {
			Cluster map[string][]string `json:"cluster"`
		}
		require.NoError(t, json.Unmarshal([]byte(m[1]), &tfConfig))
		tfHosts := map[string]bool{}
		for _, addr := range tfConfig.Cluster["worker"] {
			host, _, err := net.SplitHostPort(addr)
			require.NoError(t, err, addr)
			tfHosts[host] = true
		}
		require.Equal(t, hosts, tfHosts, "TF_CONFIG names the three workers' hosts")
		// run's live output (worker:0's) and `tfyarn logs` of another task, once the job ended.
		require.Contains(t, stderr, "[worker:0] tfyarn test image, Debian bookworm")
		require.Contains(t, stderr, "[worker:0] python "+imagePython)
		require.Contains(t, stderr, "[worker:0] worker:0: 3 replicas in sync")
		var logs string
		for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(2 * time.Second) {
			var code int
			logs, _, code = execTfyarnFor(t, c, bin, time.Minute, alice, "logs", r.AppID, "--task", "worker:2")
			if code == exitOK && strings.Contains(logs, "final loss") {
				break
			}
			require.True(t, time.Now().Before(deadline), "tfyarn logs --task worker:2 had no final loss within 90 s (exit %d):\n%s", code, logs)
		}
		require.Contains(t, logs, "tfyarn test image, Debian bookworm")
		require.Contains(t, logs, "python "+imagePython)
	}})
	later = append(later, clustertest.Subtest{Name: "am_attempt_adopts_tasks_in_images", Run: func(t *testing.T) {
		// The AM (on the host) is killed with --am-attempts 2; attempt 2 adopts both tasks, which
		// run on in their images and find it through their launchers' control ports. The tasks
		// count their runs in a directory they mount read-write (the cluster allows such mounts
		// below the NodeManagers' own directories only).
		dir := filepath.Join(c.Dir, "data", "nm-0", "local", "e2e-am-attempt-"+filepath.Base(t.TempDir()))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.Chmod(dir, 0o1777))
		t.Cleanup(func() { os.RemoveAll(dir) })
		fc := amKilledWithAttemptsOn([]string{"--image", image, "--mount", dir + ":" + dir + ":rw"})
		j := startFaultJobIn(t, c, bin, dir, fc.args...)
		fault := fc.inject(t, c, j)
		r := fc.check(t, c, j, fault)
		t.Logf("%s in images: %s", fc.name, r.Outcome)
	}})
	later = append(later, clustertest.Subtest{Name: "task_in_image", Run: func(t *testing.T) {
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--image", image, "--worker", "2x1c,256m", "--", "sh", "-c", inImage)
		require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		// The tasks' exited containers do not pile up in the daemon.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
			out, err := exec.Command("/usr/bin/docker", "--host", c.DockerHost(), "ps", "--all", "--format", "{{.Names}}").CombinedOutput()
			require.NoError(t, err, "%s", out)
			left := 0
			for _, task := range r.Tasks {
				if strings.Contains(string(out), task.ContainerID) {
					left++
				}
			}
			if left == 0 {
				break
			}
			require.True(t, time.Now().Before(deadline), "%d exited task containers still in Docker a minute after the job", left)
		}
	}})
	later = append(later, clustertest.Subtest{Name: "same_program_outside_image_fails", Run: func(t *testing.T) {
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--worker", "1c,256m", "--", "sh", "-c", inImage)
		require.Equal(t, exitJobFailed, code, "stdout: %s\nstderr: %s", stdout, stderr)
	}})
	later = append(later, clustertest.Subtest{Name: "gpu_in_image", Run: func(t *testing.T) {
		// The gpu-labelled NodeManager runs YARN's GPU plugin (its GPU discovered from real
		// nvidia-smi output of one H100) with nvidia-docker-v2: a task that asks for a GPU in an
		// image runs with the runtime nvidia and NVIDIA_VISIBLE_DEVICES naming the GPU the
		// NodeManager assigned it (its REST API says which), tfyarn setting nothing of it. The
		// task waits for the test's go-ahead (a file in a read-only mount) while the test looks.
		gate := filepath.Join(c.Dir, "docker-mounts", "gpu-"+filepath.Base(t.TempDir()))
		require.NoError(t, os.MkdirAll(gate, 0o755))
		t.Cleanup(func() { os.RemoveAll(gate) })
		program := inImage + ` && echo "visible=$NVIDIA_VISIBLE_DEVICES cuda=$CUDA_VISIBLE_DEVICES" && i=0 && while [ ! -e /gate/go ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done`
		type result struct {
			stdout, stderr string
			code           int
		}
		done := make(chan result, 1)
		go func() {
			stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--image", image, "--mount", gate+":/gate:ro",
				"--queue", "ml-gpu", "--node-label", "gpu", "--worker", "1c,256m,1gpu", "--", "sh", "-c", program)
			done <- result{stdout, stderr, code}
		}()
		var assigned struct {
			AssignedGpuDevices []struct {
				Index       int    `json:"index"`
				MinorNumber int    `json:"minorNumber"`
				ContainerID string `json:"containerId"`
			} `json:"assignedGpuDevices"`
		}
		nmWeb := "http://" + c.Facts["nm1.web"] + "/ws/v1/node/resources/yarn.io%2Fgpu"
		httpc := &http.Client{Timeout: 10 * time.Second}
		for deadline := time.Now().Add(2 * time.Minute); len(assigned.AssignedGpuDevices) == 0; time.Sleep(250 * time.Millisecond) {
			require.True(t, time.Now().Before(deadline), "the GPU NodeManager (%s) assigned no GPU within 2 minutes", nmWeb)
			resp, err := httpc.Get(nmWeb)
			require.NoError(t, err)
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&assigned))
			resp.Body.Close()
		}
		gpu := assigned.AssignedGpuDevices[0]
		require.Len(t, assigned.AssignedGpuDevices, 1)
		var inspect string
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
			out, err := exec.Command("/usr/bin/docker", "--host", c.DockerHost(), "inspect", "--format", "{{.HostConfig.Runtime}} {{json .Config.Env}}", gpu.ContainerID).CombinedOutput()
			if err == nil {
				inspect = string(out)
				break
			}
			require.True(t, time.Now().Before(deadline), "GPU container %s not in Docker within 2 minutes: %s", gpu.ContainerID, out)
		}
		require.True(t, strings.HasPrefix(inspect, "nvidia "), "docker ran the GPU task with the runtime nvidia: %s", inspect)
		require.Contains(t, inspect, fmt.Sprintf(`"NVIDIA_VISIBLE_DEVICES=%d"`, gpu.Index))
		require.NoError(t, os.WriteFile(filepath.Join(gate, "go"), nil, 0o644))
		r := <-done
		require.Equal(t, exitOK, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
		res := runJSON(t, r.stdout)
		require.Equal(t, gpu.ContainerID, res.Tasks[0].ContainerID)
		require.Contains(t, r.stderr, fmt.Sprintf("[worker:0] visible=%d cuda=\n", gpu.Index), "the task sees the GPU the NodeManager assigned; tfyarn set no CUDA_VISIBLE_DEVICES")
	}})
	later = append(later, clustertest.Subtest{Name: "mounts", Run: func(t *testing.T) {
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
	}})
	later = append(later, clustertest.Subtest{Name: "killed_and_restarted_in_image", Run: func(t *testing.T) {
		// The first attempt's program is killed (SIGKILL, exit 137) inside the image; the
		// restarted task runs in the image again and succeeds.
		program := inImage + ` && if [ "$TFYARN_TASK_ATTEMPT" = 0 ]; then kill -9 $$; fi`
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--image", image, "--max-restarts", "1",
			"--worker", "1c,256m", "--", "sh", "-c", program)
		require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		require.Equal(t, 1, r.Tasks[0].Attempt, "the task ran a second time: %+v", r.Tasks[0])
	}})
	later = append(later, clustertest.Subtest{Name: "untrusted_registry", Run: func(t *testing.T) {
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--image", "registry.example.com/ml/tf:2.15", "--worker", "1c,256m", "--", "true")
		require.Equal(t, exitJobFailed, code, "stdout: %s\nstderr: %s", stdout, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "FAILED", r.FinalStatus)
		// The helper's own words, not YARN's wrapping of them, in the job's diagnostics, run's
		// line for the task and the AM's log (read with tfyarn logs once aggregated).
		reason := "exit code 40: container-executor: docker image registry.example.com/ml/tf:2.15 is from registry registry.example.com, which is not among the cluster's trusted registries (tfyarn.test)"
		require.Contains(t, r.Diagnostics, "failed: "+reason, "the NodeManager's reason reaches the job's diagnostics")
		require.NotContains(t, r.Diagnostics, "Exception from container-launch")
		require.Contains(t, stderr, " worker:0 failed ("+reason)
		var amLog string
		for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(2 * time.Second) {
			var code int
			amLog, _, code = execTfyarnFor(t, c, bin, time.Minute, alice, "logs", r.AppID, "--task", "am", "--file", "am.stderr")
			if code == exitOK && strings.Contains(amLog, "job FAILED") {
				break
			}
			require.True(t, time.Now().Before(deadline), "tfyarn logs --task am had no end of the job within 90 s (exit %d):\n%s", code, amLog)
		}
		require.Regexp(t, `tfyarn am: worker:0 failed in container_\S+: `+regexp.QuoteMeta(reason), amLog)
	}})
	later = append(later, clustertest.Subtest{Name: "missing_image", Run: func(t *testing.T) {
		// An image of a trusted registry the node does not have (no registry is reachable here;
		// the helper runs docker with --pull=never): the task fails with docker's own reason.
		missing := "tfyarn.test/no-such-image:" + randomHex(t)
		stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--image", missing, "--worker", "1c,256m", "--", "true")
		require.Equal(t, exitJobFailed, code, "stdout: %s\nstderr: %s", stdout, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "FAILED", r.FinalStatus)
		require.Contains(t, r.Diagnostics, "docker run failed: Error response from daemon: No such image: "+missing, r.Diagnostics)
		require.NotContains(t, r.Diagnostics, "--help")
	}})
	later = append(later, clustertest.Subtest{Name: "invalid_image_name", Run: func(t *testing.T) {
		_, stderr, code := execTfyarnFor(t, c, bin, time.Minute, alice, "run", "--image", "Registry/UPPER case", "--worker", "1c,256m", "--", "true")
		require.Equal(t, exitUsage, code, stderr)
		require.Contains(t, stderr, "is not a valid Docker image name")
		require.NotContains(t, stderr, "submitted")
	}})
	t.Run("kill", func(t *testing.T) {
		// Not parallel: it runs while the parallel subtests wait, so that the only new task
		// containers in the cluster's Docker daemon are this job's. tfyarn kill stops them (the
		// NodeManager's docker stop and kill through the helper's --run-docker), not only the
		// application; before, tfyarn status, the web UI and tfyarn logs show the running tasks.
		names := func(all bool) []string {
			args := []string{"--host", c.DockerHost(), "ps", "--format", "{{.Names}}"}
			if all {
				args = append(args, "--all")
			}
			out, err := exec.Command("/usr/bin/docker", args...).CombinedOutput()
			require.NoError(t, err, "%s", out)
			return strings.Fields(string(out))
		}
		before := map[string]bool{}
		for _, n := range names(true) {
			before[n] = true
		}
		type result struct {
			stdout, stderr string
			code           int
		}
		done := make(chan result, 1)
		go func() {
			stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, alice, "run", "--output", "json", "--image", image,
				"--worker", "2x1c,256m", "--", "sleep", "600")
			done <- result{stdout, stderr, code}
		}()
		var ours []string
		for deadline := time.Now().Add(2 * time.Minute); len(ours) < 2; time.Sleep(500 * time.Millisecond) {
			require.True(t, time.Now().Before(deadline), "the job's two task containers did not run in Docker within 2 minutes (running: %v)", ours)
			ours = ours[:0]
			for _, n := range names(false) {
				if !before[n] && strings.HasPrefix(n, "container_") {
					ours = append(ours, n)
				}
			}
		}
		parts := strings.Split(ours[0], "_") // container_<cluster>_<app>_<attempt>_<id>
		require.Len(t, parts, 5, ours[0])
		app := "application_" + parts[1] + "_" + parts[2]
		// While the tasks run in their images: tfyarn status shows the AM's live report of them,
		// and tfyarn logs reads a task's logs live from its NodeManager (the launcher's lines).
		status, errOut, code := execTfyarnFor(t, c, bin, time.Minute, alice, "status", app, "--output", "json")
		require.Equal(t, exitOK, code, errOut)
		require.Contains(t, status, `"live"`, status)
		for _, id := range ours {
			require.Contains(t, status, id, "tfyarn status names the task's container")
		}
		// The web UI at the tracking URL (the RM's web proxy to the AM) lists both tasks in their
		// images as running, each with its container and a link to its NodeManager's live log.
		var view appView
		require.NoError(t, json.Unmarshal([]byte(status), &view), status)
		require.Regexp(t, `^http://[^/]+/proxy/`+app+`/$`, view.TrackingURL)
		owner := ownerQuery(t, view.TrackingURL)
		rep := proxyStatus(t, view.TrackingURL+strings.TrimPrefix(contract.StatusPath, "/")+owner)
		require.Len(t, rep.Tasks, 2)
		page := httpGet(t, view.TrackingURL+owner)
		for _, task := range rep.Tasks {
			require.Contains(t, ours, task.ContainerID)
			row := taskRow(t, page, task.Task)
			require.Contains(t, row, `data-state="running"`)
			require.Contains(t, row, task.ContainerID)
			logs := fmt.Sprintf("http://%s/node/containerlogs/%s/%s/stdout", task.NodeHTTP, task.ContainerID, rep.User)
			require.Contains(t, row, `href="`+logs+`"`)
			stderrLog := strings.TrimSuffix(logs, "stdout") + "stderr"
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
				body, err := tryGet(stderrLog)
				if err == nil && strings.Contains(body, "tfyarn task "+task.Task+": ") {
					break
				}
				require.True(t, time.Now().Before(deadline), "%s's NodeManager served no launcher line at %s within a minute: %v\n%s", task.Task, stderrLog, err, body)
			}
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
			logs, _, code := execTfyarnFor(t, c, bin, time.Minute, alice, "logs", app, "--task", "worker:0")
			if code == exitOK && strings.Contains(logs, "tfyarn task worker:0: worker:0 at ") {
				break
			}
			require.True(t, time.Now().Before(deadline), "tfyarn logs --task worker:0 had no launcher line within a minute (exit %d):\n%s", code, logs)
		}
		_, stderr, code := execTfyarnFor(t, c, bin, time.Minute, alice, "kill", app)
		require.Equal(t, exitOK, code, stderr)
		r := <-done
		require.Equal(t, exitJobFailed, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
		require.Equal(t, "KILLED", runJSON(t, r.stdout).FinalStatus)
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
			left := 0
			for _, n := range names(false) {
				if strings.HasPrefix(n, "container_"+parts[1]+"_"+parts[2]+"_") {
					left++
				}
			}
			if left == 0 {
				break
			}
			require.True(t, time.Now().Before(deadline), "%d containers of %s still run in Docker a minute after the kill", left, app)
		}
	})
	// Two, not three: in a CI-shaped run (four lanes on 2 cores) three at a time made the
	// TensorFlow MWMS job take 218 s and the test 286 s, against 151 s as t.Parallel subtests.
	clustertest.Subtests(t, 2, later...)
}

// Issue 20: on NodeManagers without YARN's Docker runtime a task asked to run in an image fails
// instead of running on the host. The plain cluster's LinuxContainerExecutor does not allow the
// docker runtime: the NodeManager refuses the container before anything of it runs (exit status
// -1000) with no reason to YARN ("Requested runtime not allowed" is in its log only), so the
// program never ran and its task never registered; the AM asks the NodeManager's configuration
// (/conf) and says why. (A DefaultContainerExecutor
// ignores the runtime and runs the launcher on the host, which then refuses: TestCheckInImage.)
//
//	go test -tags e2e -run '^TestE2EDockerImageIgnored$' ./cmd/tfyarn/
func TestE2EDockerImageIgnored(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	marker := filepath.Join(clustertest.ContainerDir(t), "ran")
	stdout, stderr, code := execTfyarnFor(t, c, bin, 5*time.Minute, nil, "run", "--output", "json", "--image", "tfyarn.test/tfyarn-test-image:1",
		"--worker", "1c,256m", "--", "touch", marker)
	require.Equal(t, exitJobFailed, code, "stdout: %s\nstderr: %s", stdout, stderr)
	r := runJSON(t, stdout)
	require.Equal(t, "FAILED", r.FinalStatus)
	require.Contains(t, r.Diagnostics, "worker:0", r.Diagnostics)
	require.Contains(t, r.Diagnostics, "exit status -1000", r.Diagnostics)
	// YARN gives no reason for it; the AM reads the NodeManager's configuration and says why.
	reason := `refused to run the container in an image before anything of it ran: its allowed runtimes (yarn.nodemanager.runtime.linux.allowed-runtimes) are "default", without docker`
	require.Contains(t, r.Diagnostics, reason)
	require.Regexp(t, `worker:0 failed \(exit status unknown to YARN \(exit status -1000\): the NodeManager on nm\d\.tfyarn\.test `+regexp.QuoteMeta(reason), stderr)
	require.NotContains(t, stderr, "worker:0 registered", "the NodeManager refused the container: no launcher ran")
	require.NoFileExists(t, marker, "the program never ran on the host")
}
