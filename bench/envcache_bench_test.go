//go:build bench

package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// envAppRun is one `tfyarn run --env DIR` of the benchmark.
type envAppRun struct {
	What  string `json:"what"`
	AppID string `json:"app_id"`
	// WallS is `tfyarn run` from start to exit.
	WallS float64 `json:"client_wall_s"`
	// SubmittedS is the RM's NEW → NEW_SAVING, from the client's start:
	// all the client's work before submission (pack or recognise, upload
	// or find, connect, check, stage).
	SubmittedS float64 `json:"submitted_s"`
	// PackLine is what the client said about the env ("packed ... in Xs"
	// or "... unchanged since packed ... (checked in Xs)").
	PackLine string `json:"pack_line"`
	// LocalizingS is the task container's LOCALIZING → SCHEDULED on the
	// NodeManager: download and unpack of what it lacks.
	LocalizingS float64 `json:"task_localizing_s"`
	// PublicDownload: the NodeManager's public localizer downloaded the env
	// archive for this application ("Downloading public resource").
	PublicDownload bool `json:"env_public_download"`
	// User, UploadedBytes and CacheLines: for the shared cache directory
	// case (TestBenchEnvCacheShared): who ran it, what the client uploaded
	// and what it said about the shared directory's entries.
	User          string   `json:"user,omitempty"`
	UploadedBytes int64    `json:"uploaded_bytes"`
	CacheLines    []string `json:"cache_lines,omitempty"`
}

type envCacheResult struct {
	machine
	Env     string      `json:"env"`
	Runs    []envAppRun `json:"runs"`
	LoadAvg [2]string   `json:"loadavg_1m_before_after"`
}

var (
	packLineRE  = regexp.MustCompile(`(?m)^.*(packed |unchanged since packed).*$`)
	uploadedRE  = regexp.MustCompile(`submitted \(uploaded (\d+) bytes\)`)
	cacheLineRE = regexp.MustCompile(`(?m)^shared cache: .*$`)
)

// TestBenchEnvCache: a new TensorFlow environment (a hard-linked copy of
// .venv plus one random file, so its archive is new to the HDFS cache and to
// the NodeManager) shipped by three applications in a row: the first packs,
// uploads and localizes; the second recognises the unchanged directory
// without reading it (local pack cache) and finds the archive localized
// already (PUBLIC: the NodeManager's public cache); the third runs after
// Python wrote bytecode into the env, which changes nothing packed.
func TestBenchEnvCache(t *testing.T) {
	c := clustertest.Require(t)
	bin := tfyarnBin(t, c)
	work, venv, name, _ := newBenchEnv(t, c, "envcache")
	defer os.RemoveAll(work)

	env := append(c.Env(), "XDG_CACHE_HOME="+filepath.Join(work, "cache"))
	res := envCacheResult{machine: newMachine(t, c.Root, "envcache"), Env: name + ", hard-linked copy + 1 MiB random file"}
	res.LoadAvg[0] = loadAvg()
	logs := logsOf(t, c)
	for _, what := range []string{"first application of a new env", "second application, same env", "third application, after Python wrote bytecode into the env"} {
		r := envApp(t, bin, env, venv, logs)
		r.What = what
		t.Logf("%+v", r)
		res.Runs = append(res.Runs, r)
		if strings.HasPrefix(what, "second") {
			// Bytecode written by running the env locally.
			out, err := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import json, email.message, http.client").CombinedOutput()
			require.NoError(t, err, "%s", out)
		}
	}
	res.LoadAvg[1] = loadAvg()
	require.Contains(t, res.Runs[1].PackLine, "unchanged since packed")
	require.Contains(t, res.Runs[2].PackLine, "unchanged since packed")
	writeResults(t, c, "envcache", res, envCacheMarkdown(res))
}

func envApp(t *testing.T, bin string, env []string, venv string, logs clusterLogs, extra ...string) envAppRun {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Queue ml-gpu: every application's task on the one gpu node, whose NodeManager keeps what it
	// localized before (another of the cluster's NodeManagers would download the env again).
	args := append([]string{"run", "--queue", "ml-gpu", "--env", venv, "--worker", "1c,1g", "--name", "bench-envcache"}, extra...)
	cmd := exec.CommandContext(ctx, bin, append(args, "--", "python", "-c", "pass")...)
	cmd.Env = env
	o := timedRun(t, cmd)
	r := envAppRun{WallS: o.WallS, AppID: o.AppID, PackLine: o.PackLine, UploadedBytes: o.UploadedBytes}
	for _, l := range cacheLineRE.FindAllString(o.Stderr, -1) {
		r.CacheLines = append(r.CacheLines, strings.TrimSpace(l))
	}
	r.SubmittedS = waitTimeline(t, logs, r.AppID, o.Start).Submitted
	r.LocalizingS, r.PublicDownload = localizing(t, logs, r.AppID, o.Start)
	return r
}

// runOutput is one timed `tfyarn run` and what its output says.
type runOutput struct {
	Start          time.Time
	WallS          float64
	AppID          string
	PackLine       string
	UploadedBytes  int64
	Stdout, Stderr string
}

// timedRun runs cmd (a `tfyarn run`), which must succeed, and reads its
// application id, pack line and uploaded bytes.
func timedRun(t *testing.T, cmd *exec.Cmd) runOutput {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	o := runOutput{Start: time.Now()}
	require.NoError(t, cmd.Run(), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	o.WallS = round2(time.Since(o.Start).Seconds())
	o.Stdout, o.Stderr = stdout.String(), stderr.String()
	both := o.Stdout + o.Stderr
	o.AppID = appIDRE.FindString(both)
	require.NotEmpty(t, o.AppID, "%s", both)
	o.PackLine = strings.TrimSpace(packLineRE.FindString(both))
	if m := uploadedRE.FindStringSubmatch(both); m != nil {
		o.UploadedBytes, _ = strconv.ParseInt(m[1], 10, 64)
	}
	return o
}

// waitTimeline waits up to 30 s for appID's timeline in the cluster's log
// (the log is written a moment after the application ends).
func waitTimeline(t *testing.T, logs clusterLogs, appID string, start time.Time) timeline {
	t.Helper()
	var tl timeline
	var ok bool
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if tl, ok = readTimeline(t, logs, appID, start); ok || time.Now().After(deadline) {
			break
		}
	}
	require.True(t, ok, "no timeline for %s in %s within 30s", appID, logs)
	return tl
}

// localizing reads the task container's LOCALIZING → SCHEDULED from the
// NodeManager's log, and whether the public localizer downloaded an env
// archive meanwhile.
func localizing(t *testing.T, logs clusterLogs, appID string, start time.Time) (float64, bool) {
	data := logs.read(t)
	task := "container_" + strings.TrimPrefix(appID, "application_") + "_01_000002"
	var from, to float64 = -1, -1
	public := false
	for _, line := range strings.Split(string(data), "\n") {
		// <sha256>-env.tar.gz in a shared directory; a venv's layers
		// (env-layer.NAME.tar.gz) since run --env DIR ships them.
		envDownload := strings.Contains(line, "Downloading public resource") && (strings.Contains(line, "env.tar.gz,") || strings.Contains(line, "/env-layer.") || strings.Contains(line, "-env-layer."))
		if !strings.Contains(line, task) && !envDownload {
			continue
		}
		m := logTimeRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ts, err := time.ParseInLocation("2006-01-02 15:04:05,000", m[1], time.Local)
		require.NoError(t, err)
		s := ts.Sub(start).Seconds()
		switch {
		case strings.Contains(line, "transitioned from NEW to LOCALIZING"):
			from = s
		case strings.Contains(line, "transitioned from LOCALIZING to SCHEDULED"):
			to = s
		case envDownload && s >= 0:
			public = true
		}
	}
	require.True(t, from >= 0 && to >= from, "no localization of %s in the NodeManager's log", task)
	return round2(to - from), public
}

func envCacheMarkdown(r envCacheResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# A new environment: first and later applications\n\n")
	fmt.Fprintf(&b, "`bin/tfyarn run --queue ml-gpu --env DIR --worker 1c,1g -- python -c pass` three times in a row with a new environment:\n"+
		"%s. Produced by `make bench` (bench/run.sh → bench/envcache_bench_test.go; alone:\n"+
		"`go test -tags bench -run TestBenchEnvCache -v ./bench/`).\n\n", r.Env)
	fmt.Fprintf(&b, "%s- Load average (1 min) before / after: %s / %s (shared machine)\n\n", r.machine.markdown(""), r.LoadAvg[0], r.LoadAvg[1])
	fmt.Fprintf(&b, "| application | client work before submission (s) | what the client said | task container localization (s) | env downloaded by the NodeManager | client wall (s) |\n|---|---:|---|---:|---|---:|\n")
	for _, run := range r.Runs {
		dl := "no (in its public cache)"
		if run.PublicDownload {
			dl = "yes (public localizer)"
		}
		fmt.Fprintf(&b, "| %s | %.2f | %s | %.2f | %s | %.2f |\n", run.What, run.SubmittedS, "`"+run.PackLine+"`", run.LocalizingS, dl, run.WallS)
	}
	fmt.Fprintf(&b, "\n- **client work before submission**: from `tfyarn run`'s start to the RM's NEW → NEW_SAVING for the application\n"+
		"  (logs/cluster.log): packing or recognising the env, finding or uploading it, connecting, checks, staging.\n"+
		"- **localization**: the NodeManager's LOCALIZING → SCHEDULED for the task container: download and unpack of\n"+
		"  the env archive when its cache lacks it.\n"+
		"- The env is a PUBLIC resource (its HDFS cache path is open to others, hdfs.cacheVisibility): the NodeManager keeps\n"+
		"  one copy per node for every application and user that names the same path.\n")
	return b.String()
}

type envCacheSharedResult struct {
	machine
	Env       string      `json:"env"`
	SharedDir string      `json:"shared_dir"`
	Runs      []envAppRun `json:"runs"`
	// AdoptS and AdoptLines: the administrator's `tfyarn cache adopt DIR`
	// after A's first application, its wall time and what it said.
	AdoptS     float64   `json:"adopt_s"`
	AdoptLines []string  `json:"adopt_lines"`
	LoadAvg    [2]string `json:"loadavg_1m_before_after"`
}

// TestBenchEnvCacheShared: a new TensorFlow environment (as in
// TestBenchEnvCache) shipped by two users through a fresh shared cache
// directory (--cache-dir, mode 1777): user A's application packs, uploads
// and localizes it; the administrator adopts A's uploads (`tfyarn cache
// adopt`: a verified copy in its name, which everyone uses, since another
// user's entry never is); user B's application (other local caches: B packs
// the same venv to the same bytes) uploads nothing and has the adopted env
// localized once; A's next application localizes nothing. Baseline in the
// same run: user C ships the same env through their own cache (no shared
// directory): upload and localization again.
func TestBenchEnvCacheShared(t *testing.T) {
	c := clustertest.Require(t)
	bin := tfyarnBin(t, c)
	work, venv, name, nonce := newBenchEnv(t, c, "envcache-shared")
	defer os.RemoveAll(work)

	id := fmt.Sprintf("%x", nonce[:4])
	// Unix users too: LinuxContainerExecutor runs each one's containers as that user.
	users := map[string]string{"A": c.User(t, "tfyarn-bench-a-"+id), "B": c.User(t, "tfyarn-bench-b-"+id), "C": c.User(t, "tfyarn-bench-c-"+id)}
	shared := "/tmp/tfyarn-bench-shared-" + id
	c.Hadoop(t, "hdfs", "dfs", "-mkdir", "-p", shared)
	c.Hadoop(t, "hdfs", "dfs", "-chmod", "1777", shared)
	homes := []string{shared}
	for _, u := range users {
		c.Hadoop(t, "hdfs", "dfs", "-mkdir", "-p", "/user/"+u)
		c.Hadoop(t, "hdfs", "dfs", "-chown", u, "/user/"+u)
		homes = append(homes, "/user/"+u)
	}
	defer c.Hadoop(t, append([]string{"hdfs", "dfs", "-rm", "-r", "-f", "-skipTrash"}, homes...)...)

	res := envCacheSharedResult{machine: newMachine(t, c.Root, "envcache-shared"), Env: name + ", hard-linked copy + 1 MiB random file", SharedDir: shared}
	res.LoadAvg[0] = loadAvg()
	logs := logsOf(t, c)
	for _, step := range []struct{ who, what string }{
		{"A", "user A, first application of a new env (shared dir)"},
		{"admin", ""},
		{"B", "user B, same env (shared dir), after the administrator adopted A's uploads"},
		{"A", "user A again (shared dir)"},
		{"C", "baseline: user C, same env, own cache (no shared dir)"},
	} {
		if step.who == "admin" {
			// The cluster's superuser (the OS user that started it) adopts.
			start := time.Now()
			cmd := exec.Command(bin, "cache", "adopt", shared)
			cmd.Env = c.Env("HADOOP_USER_NAME=" + c.Superuser()) // not the tests' alice
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			res.AdoptS = round2(time.Since(start).Seconds())
			res.AdoptLines = strings.Split(strings.TrimSpace(string(out)), "\n")
			continue
		}
		user := users[step.who]
		env := append(c.Env(), "HADOOP_USER_NAME="+user, "XDG_CACHE_HOME="+filepath.Join(work, "cache-"+step.who))
		var extra []string
		if step.who != "C" {
			extra = []string{"--cache-dir", shared}
		}
		r := envApp(t, bin, env, venv, logs, extra...)
		r.What, r.User = step.what, step.who
		t.Logf("%+v", r)
		res.Runs = append(res.Runs, r)
	}
	res.LoadAvg[1] = loadAvg()
	a, b, a2, base := res.Runs[0], res.Runs[1], res.Runs[2], res.Runs[3]
	require.True(t, a.PublicDownload && a.UploadedBytes > 0)
	require.GreaterOrEqual(t, len(res.AdoptLines), 3, "A's launcher and env (its layers) adopted, then the summary")
	require.Zero(t, b.UploadedBytes, "B uploads nothing")
	require.Empty(t, b.CacheLines, "the adopted entries are used without a word")
	require.True(t, b.PublicDownload, "the adopted env is a new file: downloaded once more")
	require.Zero(t, a2.UploadedBytes)
	require.False(t, a2.PublicDownload, "A's next application localizes nothing")
	require.Contains(t, a2.PackLine, "unchanged since packed")
	require.True(t, base.PublicDownload && base.UploadedBytes > 0, "without the shared dir C uploads and localizes again")
	writeResults(t, c, "envcache-shared", res, envCacheSharedMarkdown(res))
}

func envCacheSharedMarkdown(r envCacheSharedResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# A new environment shared between users: first and later applications\n\n")
	fmt.Fprintf(&b, "`bin/tfyarn run --queue ml-gpu --env DIR --cache-dir %s --worker 1c,1g -- python -c pass` by user A; then the\n"+
		"administrator's `tfyarn cache adopt %s`; then user B, and A again, with a new environment: %s.\n"+
		"Each user has their own HADOOP_USER_NAME and local caches (XDG_CACHE_HOME), so B packs the venv again (to the\n"+
		"same bytes). Baseline in the same run: user C, same env, without --cache-dir (their own /user/C/.tfyarn/cache).\n"+
		"Produced by `make bench`; alone:\n"+
		"`make build && go test -tags bench -run TestBenchEnvCacheShared -count=1 -v ./bench/`.\n\n", r.SharedDir, r.SharedDir, r.Env)
	fmt.Fprintf(&b, "%s- Load average (1 min) before / after: %s / %s (shared machine)\n\n", r.machine.markdown(""), r.LoadAvg[0], r.LoadAvg[1])
	fmt.Fprintf(&b, "| application | client work before submission (s) | uploaded (bytes) | what the client said | task container localization (s) | env downloaded by the NodeManager | client wall (s) |\n|---|---:|---:|---|---:|---|---:|\n")
	for i, run := range r.Runs {
		if i == 1 {
			said := ""
			for j, l := range r.AdoptLines {
				if j > 0 {
					said += "<br>"
				}
				said += "`" + l + "`"
			}
			fmt.Fprintf(&b, "| the administrator: `tfyarn cache adopt` | - | - | %s | - | - | %.2f |\n", said, r.AdoptS)
		}
		dl := "no (in its public cache)"
		if run.PublicDownload {
			dl = "yes (public localizer)"
		}
		said := "`" + run.PackLine + "`"
		for _, l := range run.CacheLines {
			said += "<br>`" + l + "`"
		}
		fmt.Fprintf(&b, "| %s | %.2f | %d | %s | %.2f | %s | %.2f |\n", run.What, run.SubmittedS, run.UploadedBytes, said, run.LocalizingS, dl, run.WallS)
	}
	fmt.Fprintf(&b, "\n- **client work before submission**: from `tfyarn run`'s start to the RM's NEW → NEW_SAVING (logs/cluster.log):\n"+
		"  packing or recognising the env, finding or uploading it and the launcher, connecting, staging.\n"+
		"- **localization**: the NodeManager's LOCALIZING → SCHEDULED for the task container.\n"+
		"- Another user's entry is never used (its owner could rewrite it in place at any time): B uses A's uploads\n"+
		"  only once the administrator adopted them (verified copies in its name, which NodeManagers download once more).\n")
	return b.String()
}

// newBenchEnv makes bench/work/<dir>/venv: a hard-linked copy of the
// TensorFlow venv plus a 1 MiB random file (returned), so its archive is new
// to the HDFS caches and to the NodeManagers. It returns once the copy has
// settled, so that packing it is remembered by the local pack cache.
func newBenchEnv(t *testing.T, c *clustertest.Cluster, dir string) (work, venv, name string, nonce []byte) {
	src, name := benchEnv(t, c.Root, filepath.Join(c.Root, "bench", "work"))
	work = filepath.Join(c.Root, "bench", "work", dir)
	require.NoError(t, os.RemoveAll(work))
	require.NoError(t, os.MkdirAll(work, 0o755))
	venv = filepath.Join(work, "venv")
	out, err := exec.Command("cp", "-al", src, venv).CombinedOutput()
	require.NoError(t, err, "%s", out)
	nonce = make([]byte, 1<<20)
	_, err = rand.Read(nonce)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(venv, "bench-nonce.bin"), nonce, 0o644))
	time.Sleep(1600 * time.Millisecond) // the pack cache does not remember what changed within 1.5 s
	return work, venv, name, nonce
}
