//go:build bench

package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

type dockerRow struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Stats   stats  `json:"stats"`
}

type dockerResult struct {
	machine
	Image string      `json:"image"`
	Rows  []dockerRow `json:"rows"`
	// ImageOverPlainMedian is the image row's median over the plain row's.
	ImageOverPlainMedian float64 `json:"image_over_plain_median"`
}

// TestBenchDockerImage times the same one-task job (`-- true`) from submission to its end on the
// docker profile's cluster (LinuxContainerExecutor, Docker runtime allowed), in the test image
// (--image) and without, alternating so that both see the same load.
func TestBenchDockerImage(t *testing.T) {
	c := clustertest.RequireDocker(t)
	bin := tfyarnBin(t, c)
	runs := benchRuns(t)
	image := c.DockerImage()
	env := c.Env("HADOOP_USER_NAME=alice", "XDG_CACHE_HOME="+t.TempDir())
	plainArgs := []string{"run", "--worker", "1c,256m", "--", "true"}
	imageArgs := []string{"run", "--image", image, "--worker", "1c,256m", "--", "true"}
	timeRun := func(args []string) float64 { return timeTfyarn(t, bin, env, args) }
	// One unmeasured run each: the launcher's upload, the daemon's first container.
	timeRun(plainArgs)
	timeRun(imageArgs)
	var plain, img []float64
	for i := 0; i < runs; i++ {
		plain = append(plain, timeRun(plainArgs))
		img = append(img, timeRun(imageArgs))
	}
	r := dockerResult{machine: newMachine(t, c.Root, "docker"), Image: image, Rows: []dockerRow{
		{Name: "without an image", Command: "bin/tfyarn " + strings.Join(plainArgs, " "), Stats: summarize(plain)},
		{Name: "in the test image", Command: "bin/tfyarn " + strings.Join(imageArgs, " "), Stats: summarize(img)},
	}}
	r.ImageOverPlainMedian = round2(r.Rows[1].Stats.MedianMS / r.Rows[0].Stats.MedianMS)
	var md strings.Builder
	fmt.Fprintf(&md, "# A one-task job with and without a Docker image\n\n")
	fmt.Fprintf(&md, "Produced by `make bench` (bench/docker_bench_test.go; alone: `go test -tags bench -run '^TestBenchDockerImage$' -v ./bench/`).\n")
	fmt.Fprintf(&md, "From `tfyarn run` starting to its end, as alice, on the docker profile's cluster (`.testcluster-docker`: LinuxContainerExecutor,\n")
	fmt.Fprintf(&md, "YARN's Docker runtime, the cluster's own Docker daemon); %d runs each, alternating, after one unmeasured run each.\n\n", runs)
	md.WriteString(r.markdown(", TC_EXECUTOR=linux TC_DOCKER=1"))
	fmt.Fprintf(&md, "- Image: %s (Debian bookworm essential + python3 and libstdc++6, testcluster/dockerimage.sh)\n\n", image)
	md.WriteString("| job | median (ms) | p90 (ms) | min (ms) | max (ms) |\n|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&md, "| %s | %.0f | %.0f | %.0f | %.0f |\n", row.Name, row.Stats.MedianMS, row.Stats.P90MS, row.Stats.MinMS, row.Stats.MaxMS)
	}
	fmt.Fprintf(&md, "\nIn the image over without: %.2f× (median).\n", r.ImageOverPlainMedian)
	writeResults(t, c, "docker", r, md.String())
}

type dockerMWMSResult struct {
	machine
	Image   string      `json:"image"`
	Rows    []dockerRow `json:"rows"`
	LoadAvg [2]string   `json:"loadavg_1m_before_after"`
	// ImageOverHostMedian is the image row's median over the host row's.
	ImageOverHostMedian float64 `json:"image_over_host_median"`
}

// TestBenchDockerMWMS times the same TensorFlow MultiWorkerMirroredStrategy job (three workers on
// three hosts, one epoch of three steps, the TF venv of scripts/tfenv.sh shipped with --env) from
// submission to its end on the docker profile's cluster, in the test image and on the hosts,
// alternating. The venv is packed, uploaded and localized on every node by an unmeasured run
// each first, so the rows compare starting and running the job, not shipping its venv.
// TFYARN_BENCH_MWMS_RUNS runs each (default 3).
func TestBenchDockerMWMS(t *testing.T) {
	c := clustertest.RequireDocker(t)
	bin := tfyarnBin(t, c)
	runs := 3
	if s := os.Getenv("TFYARN_BENCH_MWMS_RUNS"); s != "" {
		var err error
		runs, err = strconv.Atoi(s)
		require.NoError(t, err, "TFYARN_BENCH_MWMS_RUNS")
	}
	image := c.DockerImage()
	venv, err := filepath.EvalSymlinks(filepath.Join(c.Root, ".venv"))
	require.NoError(t, err)
	env := c.Env("HADOOP_USER_NAME=alice", "XDG_CACHE_HOME="+t.TempDir())
	job := []string{"--env", venv, "--worker", "3x1c,1g", "--spread", "worker", "--files", filepath.Join(c.Root, "examples", "mwms_keras.py"),
		"--", "python", "mwms_keras.py", "--epochs", "1", "--steps-per-epoch", "3"}
	hostArgs := append([]string{"run"}, job...)
	imageArgs := append([]string{"run", "--image", image}, job...)
	timeRun := func(args []string) float64 { return timeTfyarn(t, bin, env, args) }
	timeRun(hostArgs)
	timeRun(imageArgs)
	r := dockerMWMSResult{machine: newMachine(t, c.Root, "docker-mwms"), Image: image}
	r.LoadAvg[0] = loadAvg()
	var host, img []float64
	for i := 0; i < runs; i++ {
		host = append(host, timeRun(hostArgs))
		img = append(img, timeRun(imageArgs))
	}
	r.LoadAvg[1] = loadAvg()
	r.Rows = []dockerRow{
		{Name: "on the hosts", Command: "bin/tfyarn " + strings.Join(hostArgs, " "), Stats: summarize(host)},
		{Name: "in the test image", Command: "bin/tfyarn " + strings.Join(imageArgs, " "), Stats: summarize(img)},
	}
	r.ImageOverHostMedian = round2(r.Rows[1].Stats.MedianMS / r.Rows[0].Stats.MedianMS)
	var md strings.Builder
	fmt.Fprintf(&md, "# TensorFlow MultiWorkerMirroredStrategy in a Docker image and on the hosts\n\n")
	fmt.Fprintf(&md, "Produced by `make bench` (bench/docker_bench_test.go; alone: `go test -tags bench -run '^TestBenchDockerMWMS$' -v ./bench/`).\n")
	fmt.Fprintf(&md, "From `tfyarn run` starting to its end, as alice, on the docker profile's cluster (`.testcluster-docker`: four NodeManagers, each\n")
	fmt.Fprintf(&md, "a process on a host of its own, LinuxContainerExecutor, YARN's Docker runtime): three workers on three hosts, one epoch of three\n")
	fmt.Fprintf(&md, "steps (examples/mwms_keras.py), the TF venv shipped with --env either way; %d runs each, alternating, after one unmeasured\n", runs)
	fmt.Fprintf(&md, "run each (which packs, uploads and localizes the venv on every node).\n\n")
	md.WriteString(r.markdown(", TC_EXECUTOR=linux TC_DOCKER=1 TC_NM_HOSTS=1"))
	fmt.Fprintf(&md, "- Image: %s\n- Load average (1 min) before / after: %s / %s (shared machine)\n\n", image, r.LoadAvg[0], r.LoadAvg[1])
	md.WriteString("| job | median (ms) | p90 (ms) | min (ms) | max (ms) |\n|---|---|---|---|---|\n")
	for _, row := range r.Rows {
		fmt.Fprintf(&md, "| %s | %.0f | %.0f | %.0f | %.0f |\n", row.Name, row.Stats.MedianMS, row.Stats.P90MS, row.Stats.MinMS, row.Stats.MaxMS)
	}
	fmt.Fprintf(&md, "\nIn the image over on the hosts: %.2f× (median).\n", r.ImageOverHostMedian)
	writeResults(t, c, "docker-mwms", r, md.String())
}

// timeTfyarn runs bin with args and env, requires it to succeed, and returns its wall time in
// milliseconds.
func timeTfyarn(t *testing.T, bin string, env, args []string) float64 {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "tfyarn %s: %s", strings.Join(args, " "), out)
	return float64(time.Since(start).Microseconds()) / 1000
}
