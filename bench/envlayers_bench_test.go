//go:build bench

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// envLayersRun is one application of TestBenchEnvLayers.
type envLayersRun struct {
	What  string `json:"what"`
	Mode  string `json:"mode"` // "monolithic" or "layered"
	AppID string `json:"app_id"`
	// PackS: monolithic, `tfyarn pack`'s wall before the run; layered,
	// what the client said it took (part of SubmittedS).
	PackS    float64 `json:"pack_s"`
	PackLine string  `json:"pack_line"`
	// SubmittedS is the client's work before submission (RM NEW →
	// NEW_SAVING from the start of `tfyarn run`).
	SubmittedS    float64 `json:"submitted_s"`
	UploadedBytes int64   `json:"uploaded_bytes"`
	LocalizingS   float64 `json:"task_localizing_s"`
	// Downloads are the env archives the NodeManager's public localizer
	// downloaded for this application, with the seconds each took from
	// its "Downloading public resource" line to its localized directory's
	// rename into the NodeManager's cache (FSDownload: download, unpack,
	// permissions, rename).
	Downloads []layerDownload `json:"downloads"`
	WallS     float64         `json:"client_wall_s"`
}

type layerDownload struct {
	Name     string  `json:"name"`
	Seconds  float64 `json:"seconds"`
	StartS   float64 `json:"start_s"` // from the run's start
	Resolved bool    `json:"resolved"`
	// PermissionsS is the tail of Seconds that FSDownload spent setting
	// permissions: from the first file's permission change (the earliest
	// ctime among the localized regular files: each is chmodded after the
	// unpack, which sets their ctimes anew) to the rename. The rest of
	// Seconds is the download and unpack, one stream (HDFS → gzip -dc |
	// tar -x).
	PermissionsS float64 `json:"permissions_s"`
}

type envLayersResult struct {
	machine
	Env        string         `json:"env"`
	Changed    string         `json:"changed"`
	EnvBytes   int64          `json:"env_archive_bytes"`
	Runs       []envLayersRun `json:"runs"`
	FetchCount string         `json:"nm_fetch_thread_count"`
	LoadAvg    [2]string      `json:"loadavg_1m_before_after"`
}

var (
	publicDLRE = regexp.MustCompile(`^(\S+ \S+) INFO .*Downloading public resource: \{ hdfs://[^/]+(\S+/(env[^/,]*\.tar\.gz)),`)
	layersRE   = regexp.MustCompile(`in (\d+) layers(?: \((\d+) changed\))?`)
	packTookRE = regexp.MustCompile(`in ([0-9.]+)s, sha256`)
)

// TestBenchEnvLayers: the TensorFlow venv (a hard-linked copy with a random
// file in every top-level directory of site-packages and 64 random
// modules, so that every layer and the monolithic archive are new to the
// HDFS cache and to the NodeManager), shipped monolithic (tfyarn pack, then
// --env ARCHIVE: one archive) and layered (--env DIR), interleaved: a new
// env's first application each way; the layered env again unchanged; then
// one small package (six.py) changed, shipped both ways.
func TestBenchEnvLayers(t *testing.T) {
	c := clustertest.Require(t)
	bin := tfyarnBin(t, c)
	work, venv, name, _ := newBenchEnv(t, c, "envlayers")
	defer os.RemoveAll(work)
	sites, err := filepath.Glob(filepath.Join(venv, "lib", "python*", "site-packages"))
	require.NoError(t, err)
	site := sites[0]
	entries, err := os.ReadDir(site)
	require.NoError(t, err)
	nonce := randHex(t)
	for _, e := range entries {
		if e.IsDir() && !strings.HasSuffix(e.Name(), ".dist-info") && e.Name() != "__pycache__" {
			require.NoError(t, os.WriteFile(filepath.Join(site, e.Name(), "bench-nonce.txt"), []byte(nonce), 0o644))
		}
	}
	for i := 0; i < 64; i++ {
		require.NoError(t, os.WriteFile(filepath.Join(site, fmt.Sprintf("bench_nonce_%02d.py", i)), []byte("N = '"+nonce+"'\n"), 0o644))
	}
	time.Sleep(1600 * time.Millisecond)

	env := append(c.Env(), "XDG_CACHE_HOME="+filepath.Join(work, "cache"))
	res := envLayersResult{machine: newMachine(t, c.Root, "envlayers"), FetchCount: "4 (Hadoop's default; the test cluster does not set it)",
		Env: name + ", hard-linked copy + random files in every package directory", Changed: "six.py (one line added)"}
	res.LoadAvg[0] = loadAvg()
	logs, localDirs := logsOf(t, c), nodeLocalDirs(t, c.Dir)
	archive := filepath.Join(work, "env.tar.gz")

	mono := func(what string) envLayersRun {
		start := time.Now()
		out, err := exec.Command(bin, "pack", venv, "-o", archive).CombinedOutput()
		require.NoError(t, err, "%s", out)
		packS := round2(time.Since(start).Seconds())
		st, err := os.Stat(archive)
		require.NoError(t, err)
		res.EnvBytes = st.Size()
		r := layersApp(t, bin, env, archive, logs, localDirs)
		r.What, r.Mode, r.PackS = what, "monolithic", packS
		return r
	}
	layered := func(what string) envLayersRun {
		r := layersApp(t, bin, env, venv, logs, localDirs)
		r.What, r.Mode = what, "layered"
		if m := packTookRE.FindStringSubmatch(r.PackLine); m != nil {
			r.PackS, _ = strconv.ParseFloat(m[1], 64)
		}
		return r
	}
	add := func(r envLayersRun) {
		t.Logf("%+v", r)
		res.Runs = append(res.Runs, r)
	}
	add(mono("new env, first application"))
	add(layered("new env, first application"))
	add(layered("same env again"))
	// One small package changed: a new file (the copy's six.py is a hard
	// link to .venv's, which must not change).
	six := filepath.Join(site, "six.py")
	b, err := os.ReadFile(six)
	require.NoError(t, err)
	require.NoError(t, os.Remove(six))
	require.NoError(t, os.WriteFile(six, append(b, []byte("# changed by the benchmark "+nonce+"\n")...), 0o644))
	time.Sleep(1600 * time.Millisecond)
	add(layered("after one small package changed"))
	add(mono("after one small package changed"))
	res.LoadAvg[1] = loadAvg()

	first := res.Runs[1]
	m := layersRE.FindStringSubmatch(first.PackLine)
	require.NotNil(t, m, first.PackLine)
	n, _ := strconv.Atoi(m[1])
	require.Len(t, first.Downloads, n, "a new env: the NodeManager downloads every layer")
	require.Zero(t, res.Runs[2].UploadedBytes)
	require.Empty(t, res.Runs[2].Downloads)
	changed := res.Runs[3]
	m = layersRE.FindStringSubmatch(changed.PackLine)
	require.NotNil(t, m, changed.PackLine)
	require.Equal(t, "1", m[2], changed.PackLine)
	require.Len(t, changed.Downloads, 1, "only the changed layer is localized")
	writeResults(t, c, "envlayers", res, envLayersMarkdown(res))
}

// layersApp runs `tfyarn run --env ENV` with a trivial Python program and
// reads what it and the NodeManager did.
func layersApp(t *testing.T, bin string, env []string, envArg string, logs clusterLogs, localDirs []string) envLayersRun {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// Queue ml-gpu: every application's task on the one gpu node, whose NodeManager keeps the layers
	// it localized before (another of the cluster's NodeManagers would download every layer).
	cmd := exec.CommandContext(ctx, bin, "run", "--queue", "ml-gpu", "--env", envArg, "--worker", "1c,1g", "--name", "bench-envlayers", "--", "python", "-c", "import six")
	cmd.Env = env
	o := timedRun(t, cmd)
	r := envLayersRun{WallS: o.WallS, AppID: o.AppID, PackLine: o.PackLine, UploadedBytes: o.UploadedBytes}
	r.SubmittedS = waitTimeline(t, logs, r.AppID, o.Start).Submitted
	r.LocalizingS, _ = localizing(t, logs, r.AppID, o.Start)
	r.Downloads = envDownloads(t, logs, localDirs, r.AppID, o.Start, time.Now())
	return r
}

// envDownloads lists the public downloads of env archives logged between
// from and to, each timed up to its localized directory's rename into the
// NodeManager's file cache (FSDownload unpacks into filecache/<n>_tmp, sets
// every entry's permissions, then renames it to filecache/<n>: the rename
// is that directory's last change, its ctime).
func envDownloads(t *testing.T, logs clusterLogs, localDirs []string, appID string, from, to time.Time) []layerDownload {
	data := logs.read(t)
	// What the task container asked for: other applications' downloads
	// meanwhile (the cluster is shared) are not its own.
	task := "container_" + strings.TrimPrefix(appID, "application_") + "_01_000002"
	var wanted string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "Container "+task+" is localizing: [") {
			wanted = line
		}
	}
	require.NotEmpty(t, wanted, "no localizing line for %s", task)
	var localized []string
	for _, dir := range localDirs {
		m, err := filepath.Glob(filepath.Join(dir, "filecache", "*", "env*.tar.gz"))
		require.NoError(t, err)
		localized = append(localized, m...)
	}
	var out []layerDownload
	for _, line := range strings.Split(string(data), "\n") {
		m := publicDLRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ts, err := time.ParseInLocation("2006-01-02 15:04:05,000", m[1], time.Local)
		require.NoError(t, err)
		if ts.Before(from.Add(-time.Second)) || ts.After(to) || !strings.Contains(wanted, m[2]+",") && !strings.Contains(wanted, m[2]+"]") {
			continue
		}
		d := layerDownload{Name: m[3], StartS: round2(ts.Sub(from).Seconds()), Seconds: -1}
		// The localized copy of this file: the newest directory of its name
		// renamed after the download began.
		var best time.Time
		var bestPath string
		for _, p := range localized {
			if filepath.Base(p) != m[3] {
				continue
			}
			st, err := os.Stat(filepath.Dir(p))
			if err != nil {
				continue
			}
			sys, ok := st.Sys().(*syscall.Stat_t)
			if !ok {
				continue
			}
			ctime := time.Unix(sys.Ctim.Sec, sys.Ctim.Nsec)
			if ctime.Before(ts) || ctime.After(to) {
				continue
			}
			if best.IsZero() || ctime.Before(best) {
				best, bestPath = ctime, p
			}
		}
		if !best.IsZero() {
			d.Seconds, d.Resolved = round2(best.Sub(ts).Seconds()), true
			if first := firstFileCtime(bestPath); !first.IsZero() && !first.After(best) {
				d.PermissionsS = round2(best.Sub(first).Seconds())
			}
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seconds > out[j].Seconds })
	return out
}

// firstFileCtime is the earliest ctime among the regular files under dir.
func firstFileCtime(dir string) time.Time {
	var first time.Time
	_ = filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return nil
		}
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) != nil {
			return nil
		}
		if c := time.Unix(st.Ctim.Sec, st.Ctim.Nsec); first.IsZero() || c.Before(first) {
			first = c
		}
		return nil
	})
	return first
}

func envLayersMarkdown(r envLayersResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# A new environment in layers vs one archive\n\n")
	fmt.Fprintf(&b, "The environment %s, shipped by `bin/tfyarn run --queue ml-gpu --env ENV --worker 1c,1g -- python -c 'import six'`:\n"+
		"monolithic is `tfyarn pack DIR -o env.tar.gz` then `--env env.tar.gz` (one archive, as before layers);\n"+
		"layered is `--env DIR` (envpack.PackLayers: one PUBLIC archive per large distribution, the rest in groups,\n"+
		"assembled into ./env by the task launcher). In this order, in one run: monolithic new, layered new, layered\n"+
		"unchanged, then %s changed: layered, monolithic. Produced by `make bench`; alone:\n"+
		"`make build && go test -tags bench -run TestBenchEnvLayers -count=1 -v ./bench/`.\n\n", r.Env, r.Changed)
	fmt.Fprintf(&b, "%s- NodeManager public localizer threads (`yarn.nodemanager.localizer.fetch.thread-count`): %s\n", r.machine.markdown(""), r.FetchCount)
	fmt.Fprintf(&b, "- Monolithic archive: %.1f MB\n", float64(r.EnvBytes)/1e6)
	fmt.Fprintf(&b, "- Load average (1 min) before / after: %s / %s (shared machine)\n\n", r.LoadAvg[0], r.LoadAvg[1])
	fmt.Fprintf(&b, "| application | mode | pack (s) | client work before submission (s) | uploaded (MB) | task container localization (s) | env archives downloaded by the NodeManager | client wall (s) |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "| %s | %s | %.2f | %.2f | %.2f | %.2f | %d | %.2f |\n", run.What, run.Mode, run.PackS, run.SubmittedS, float64(run.UploadedBytes)/1e6, run.LocalizingS, len(run.Downloads), run.WallS)
	}
	fmt.Fprintf(&b, "\nWhat the client said:\n\n")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "- %s, %s: `%s`\n", run.Mode, run.What, run.PackLine)
	}
	fmt.Fprintf(&b, "\nNodeManager side, per archive (from its \"Downloading public resource\" log line to the rename of its\n"+
		"localized directory into the file cache: download and unpack, then permissions), slowest first:\n\n")
	for _, run := range r.Runs {
		if len(run.Downloads) == 0 {
			continue
		}
		fmt.Fprintf(&b, "- %s, %s:", run.Mode, run.What)
		for i, d := range run.Downloads {
			sep := ","
			if i == 0 {
				sep = ""
			}
			if d.Resolved {
				fmt.Fprintf(&b, "%s %s %.1f s (permissions %.1f s; from +%.1f s)", sep, strings.TrimSuffix(strings.TrimPrefix(d.Name, "env-layer."), ".tar.gz"), d.Seconds, d.PermissionsS, d.StartS)
			} else {
				fmt.Fprintf(&b, "%s %s ? (from +%.1f s)", sep, strings.TrimSuffix(strings.TrimPrefix(d.Name, "env-layer."), ".tar.gz"), d.StartS)
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n- **client work before submission**: `tfyarn run`'s start to the RM's NEW → NEW_SAVING (logs/cluster.log):\n"+
		"  layered includes packing (changed layers only) and uploading (layers the cache lacks); monolithic packs\n"+
		"  beforehand (pack column) and uploads here.\n"+
		"- **localization**: the NodeManager's LOCALIZING → SCHEDULED for the task container.\n")
	b.WriteString(envLayersReading)
	return b.String()
}

// envLayersReading is what the runs of 2026-11-26 showed, with the runs
// it names (the figures in it are theirs; a new run rewrites the tables
// above, not this text).
const envLayersReading = `
## Reading, against issue 25's goals

The tables above are the fourth of four runs in a row on a quiet machine (2026-11-26 09:59-10:07 UTC,
load average 0.4-3, AMD EPYC, 2 cores, nothing else running but the main test cluster). All four:

| run | new env, first job: layered / one archive (s) | unchanged env, layered (s) | one small package changed: layered / one archive (s) | uploaded after the change, layered |
|---|---:|---:|---:|---:|
| 1 (load 3.0) | 17.42 / 21.00 | 3.26 | 4.03 / 17.94 | 0.28 MB |
| 2 (load 1.3) | 16.88 / 17.21 | 3.20 | 3.41 / 17.22 | 0.28 MB |
| 3 (load 0.9) | 15.53 / 19.02 | 3.68 | 3.43 / 16.93 | 0.28 MB |
| 4 (load 0.4) | 17.10 / 17.51 | 3.20 | 3.95 / 16.57 | 0.28 MB |

- **First job of a new TensorFlow env** (goal: at most 20 s wall): met on a quiet machine, 15.5-17.4 s
  layered against 17.2-21.0 s for one archive (whose pack, 3.3-5.3 s, is not even in its wall). Of
  the layered job's time: packing 3.9-4.1 s, submitted 5.5-6.1 s after the start, the NodeManager's
  localization 7.3-7.9 s (15 layers fetched together; the tensorflow layer alone 7.1-7.7 s, 0.6-0.7 s
  of it permissions), the rest YARN's container start and the program.
- **One small package changed** (goals: at most 5% uploaded, only that part localized, the job within
  2 s of an unchanged env's): met in every run: 0.28 MB of 349.2 MB uploaded (0.08%), one layer
  localized (0.04-0.07 s on the NodeManager), 3.4-4.0 s wall against 3.2-3.7 s for the unchanged env.
  One archive: everything again, 16.6-17.9 s.
- **On a saturated machine the 20 s goal is not met**: the same benchmark at 06:48 (load 21 → 26,
  another CPU, Intel Xeon) took 46.7 s layered vs 58.2 s one archive (pack 18.8 s, localization
  20.3 s): packing (gzip) on the client and unpacking (gzip -dc | tar) on the NodeManager are CPU, and
  with the cluster's five JVMs and other tests on two cores both stretch 3-5x. Layers stay ahead of
  one archive at every load measured.

The test cluster's NodeManagers set the permissions of localized files in-process, as production
NodeManagers do with Hadoop's native library (docs/test-cluster.md: LocalPermissions). The same
benchmark on the same env, run just before that change (06:37, load 21 → 45), for comparison:

| application | mode | task container localization (s) | client wall (s) |
|---|---|---:|---:|
| new env, first application, forked chmod | monolithic | 89.79 | 119.73 |
| new env, first application, forked chmod | layered | 68.98 | 100.61 |
| after one small package changed, forked chmod | layered | 0.71 | 4.22 |
| after one small package changed, forked chmod | monolithic | 81.75 | 108.34 |

At 06:48 (load 21-26), with in-process permissions, the NodeManager's time went per byte, not per
file: the tensorflow layer (234.8 MiB of the env's 333.1 MiB, 10,243 files) took 20.0 s, of which
1.6 s setting permissions (the earliest ctime among its localized files to the rename of its
directory) and 18.3 s downloading and unpacking (one stream through gzip -dc and tar, sharing two
busy cores with the other 14 layers fetched at once); the monolithic archive's 14,342 files took
3.5 s of permissions. So splitting the data-only tensorflow/include (9,899 files, but 172 MB of the
distribution's 930 MB and little of its compressed bytes) into a layer of its own would save at most
the 1.6 s of permissions and is not done; a distribution is still never split, since the dynamic
loader resolves ` + "`$ORIGIN`" + ` from the real path of a linked directory (libtensorflow_cc.so.2, 539 MB,
must sit beside tensorflow/python's extensions).

## What the first job's time goes to now, and what was tried

- **Reruns vary with the machine's load, the split does not.** The same benchmark on the same code
  at 07:28 (load 20 → 61): layered 57.7 s wall (pack 37.9 s; localization 12.7 s, the tensorflow
  layer 11.9 s of which 2.0 s permissions), one archive 47.8 s (+27.6 s pack beforehand; localization
  12.5 s). Packing and uploading are most of the layered wall; the tensorflow layer's download and
  unpack are most of the localization.
- **The NodeManager's fetch threads** (` + "`" + `yarn.nodemanager.localizer.fetch.thread-count` + "`" + `): not
  changed. The test cluster keeps Hadoop's default, 4, which is also what a production NodeManager
  uses unless its administrator sets it. The public localizer already unpacks four layers at a time
  on two cores, CPU-bound (gzip -dc); the tensorflow layer, one 235 MiB stream, is the longest
  alone and more threads cannot split it.
- **Data-only directories as layers of their own** (tensorflow/include: 9,899 files): not done.
  Permissions now cost 1.6-2.6 s of the tensorflow layer's 10-20 s over the runs, the most such a
  split could save; its bytes stay.
- **Uploading each layer while the next ones are packed** (largest first): tried, not landed.
  Interleaved A/B of the first job of a new layered env (a fresh copy with new files in every
  package directory each time; six pairs, loads 25-42; a one-off script, not part of ` + "`" + `make bench` + "`" + `,
  alternating two client binaries: "sequential" is the code above, packing every layer, then
  uploading):

| pair (first run) | pack (s) seq / overlapped | to submission (s) seq / overlapped | wall (s) seq / overlapped |
|---|---:|---:|---:|
| 1 (sequential) | 25.2 / 33.8 | 29.5 / 35.6 | 43.1 / 51.7 |
| 2 (sequential) | 33.0 / 25.9 | 36.1 / 28.9 | 52.2 / 42.5 |
| 3 (sequential) | 32.0 / 31.0 | 35.2 / 34.7 | 47.3 / 46.2 |
| 4 (overlapped) | 39.6 / 25.7 | 43.6 / 28.0 | 59.6 / 40.1 |
| 5 (overlapped) | 17.6 / 23.4 | 20.7 / 25.7 | 34.7 / 38.2 |
| 6 (overlapped) | 7.1 / 11.4 | 8.7 / 12.5 | 19.6 / 22.6 |

  The time from the end of packing to the submission (the upload, or what is left of it, and the
  submission itself) fell from a median 3.2 s to 2.3 s, but the paired walls differ by -19.5 to
  +8.6 s (median +1.0 s): on two cores the parallel gzip and the uploads (the client's checksums,
  the DataNode on the same machine) compete for the same CPUs, and uploading 349 MB over loopback
  takes only 2-4 s to begin with. Not worth a second goroutine in the submission path on this
  evidence; on a cluster whose uploads cross a network to three DataNodes the overlap could hide
  more, which this machine cannot show.
- **The 20 s goal** is within reach only when the machine is not saturated: in pair 6, at a falling
  load, the sequential client's first job of the new layered env took 19.6 s wall (packed in 7.1 s,
  submitted at 8.7 s); at loads of 20-60 the same job takes 38-58 s.
`
