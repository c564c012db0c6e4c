//go:build bench

package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/envpack"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/ipc"
)

// packRounds is how many times each uploader sends the archive, alternating.
const packRounds = 5

type packVariant struct {
	Name         string  `json:"name"`
	Level        int     `json:"level"`
	Parallel     bool    `json:"parallel"`
	Seconds      float64 `json:"seconds"`
	ArchiveBytes int64   `json:"archive_bytes"`
	InMBps       float64 `json:"input_mb_per_s"`
}

type uploadStats struct {
	Seconds    []float64 `json:"seconds"`
	MedianS    float64   `json:"median_s"`
	MedianMBps float64   `json:"median_mb_per_s"`
}

type packResult struct {
	machine
	Env          string        `json:"env"`
	EnvKind      string        `json:"env_kind"`
	EnvFiles     int           `json:"env_files"`
	EnvBytes     int64         `json:"env_bytes"`
	Variants     []packVariant `json:"pack_variants"`
	ArchiveBytes int64         `json:"archive_bytes"`
	PackSeconds  float64       `json:"pack_seconds"`
	Tfyarn       uploadStats   `json:"tfyarn_upload"`
	// TfyarnKnown passes the sha256 Pack computed (UploadOptions.SHA256), as
	// `tfyarn run --env DIR` can: no separate hashing pass over the file.
	TfyarnKnown  uploadStats `json:"tfyarn_upload_known_digest"`
	Java         uploadStats `json:"java_put"`
	JavaStartupS float64     `json:"java_startup_s"`
	// RatioThroughput is tfyarn's median upload throughput over Java's
	// (whole commands); RatioTransfer subtracts the JVM's start-up from Java's.
	RatioThroughput    float64 `json:"ratio_throughput"`
	RatioTransfer      float64 `json:"ratio_transfer_only"`
	RatioTransferKnown float64 `json:"ratio_transfer_only_known_digest"`
	PackUploadSecond   float64 `json:"pack_plus_upload_s"`
	// DataNodeTfyarn and DataNodeJava are the DataNode's own block-write
	// durations for each upload (clienttrace), summed per file: the transfer
	// alone, measured by the same instrument for both clients.
	DataNodeTfyarn uploadStats `json:"datanode_transfer_tfyarn"`
	DataNodeJava   uploadStats `json:"datanode_transfer_java"`
	RatioDataNode  float64     `json:"ratio_datanode_transfer"`
	// LoadAvg is /proc/loadavg's 1-minute figure before and after: the test
	// machine is shared (other test runs, both clusters' JVMs).
	LoadAvg [2]string `json:"loadavg_1m_before_after"`
}

// TestBenchPack packs a ~500 MB environment (the TensorFlow venv of
// scripts/tfenv.sh when it exists, else a synthetic one under bench/work/),
// then uploads the archive with tfyarn's HDFS cache upload and with Hadoop's
// `hdfs dfs -put`, alternating, and removes everything it uploaded.
func TestBenchPack(t *testing.T) {
	c := clustertest.Require(t)
	work := filepath.Join(c.Root, "bench", "work")
	require.NoError(t, os.MkdirAll(work, 0o755))
	envDir, envName := benchEnv(t, c.Root, work)
	ctx := context.Background()
	load0 := loadAvg()

	r := packResult{machine: newMachine(t, c.Root, "pack"), Env: envName}

	// Pack: the default (pgzip, level 1) last so its archive is the one uploaded;
	// one unmeasured pass first so every variant reads from the page cache.
	archive := filepath.Join(work, "pack-bench.tar.gz")
	t.Cleanup(func() { os.Remove(archive) })
	packOnce(t, ctx, envDir, archive, envpack.Options{})
	var m envpack.Manifest
	for _, v := range []packVariant{
		{Name: "compress/gzip level 6", Level: 6}, {Name: "pgzip level 6", Level: 6, Parallel: true},
		{Name: "compress/gzip level 1", Level: 1}, {Name: "pgzip level 1 (default)", Level: 1, Parallel: true},
	} {
		start := time.Now()
		m = packOnce(t, ctx, envDir, archive, envpack.Options{Level: v.Level, Serial: !v.Parallel})
		v.Seconds = round2(time.Since(start).Seconds())
		v.ArchiveBytes = m.ArchiveBytes
		v.InMBps = round2(float64(m.Bytes) / 1e6 / v.Seconds)
		r.Variants = append(r.Variants, v)
		t.Logf("pack %-24s %6.2f s  %5.1f MB/s in  → %d MB", v.Name, v.Seconds, v.InMBps, v.ArchiveBytes/1e6)
	}
	r.EnvKind, r.EnvFiles, r.EnvBytes = string(m.Kind), m.Files, m.Bytes
	r.ArchiveBytes = m.ArchiveBytes
	r.PackSeconds = r.Variants[len(r.Variants)-1].Seconds

	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	user := ipc.DefaultUser()
	javaDst := "/tmp/tfyarn-bench-put-" + randHex(t) + ".tar.gz"
	t.Cleanup(func() { c.Hadoop(t, "hdfs", "dfs", "-rm", "-f", "-skipTrash", javaDst) })

	// The JVM's fixed cost: the same command putting a 1-byte file (JVM start,
	// configuration, create, one block, close), median of packRounds.
	tiny := filepath.Join(work, "pack-bench-tiny")
	require.NoError(t, os.WriteFile(tiny, []byte{'x'}, 0o644))
	t.Cleanup(func() { os.Remove(tiny) })
	c.Hadoop(t, "hdfs", "dfs", "-put", "-f", tiny, javaDst) // warm-up
	var startup []float64
	for i := 0; i < packRounds; i++ {
		start := time.Now()
		c.Hadoop(t, "hdfs", "dfs", "-put", "-f", tiny, javaDst)
		startup = append(startup, time.Since(start).Seconds())
	}
	r.JavaStartupS = round2(quantile(sortedCopy(startup), 0.5))

	var ours, oursKnown, java, dnOurs, dnJava []float64
	trace := newDNTrace(t, c)
	upload := func(opts hdfs.UploadOptions) float64 {
		name := "pack-bench-" + randHex(t) + ".tar.gz" // a fresh name: the content may be cached already
		start := time.Now()
		fs, err := hdfs.Connect(ctx, conf, user)
		require.NoError(t, err)
		res, n, err := fs.UploadCachedOptions(ctx, archive, name, opts)
		require.NoError(t, err)
		took := time.Since(start).Seconds()
		require.Equal(t, m.ArchiveBytes, n)
		require.Equal(t, m.SHA256, path.Base(path.Dir(res.Path)), "cached under the archive's sha256")
		removeCached(t, c, fs, res.Path)
		require.NoError(t, fs.Close())
		return took
	}
	for i := 0; i < packRounds; i++ {
		trace.mark(t)
		start := time.Now()
		c.Hadoop(t, "hdfs", "dfs", "-put", "-f", archive, javaDst)
		java = append(java, time.Since(start).Seconds())
		dnJava = append(dnJava, trace.transfer(t, "DFSClient_", m.ArchiveBytes))
		ours = append(ours, upload(hdfs.UploadOptions{}))
		dnOurs = append(dnOurs, trace.transfer(t, "go-hdfs-", m.ArchiveBytes))
		oursKnown = append(oursKnown, upload(hdfs.UploadOptions{SHA256: m.SHA256}))
		dnOurs = append(dnOurs, trace.transfer(t, "go-hdfs-", m.ArchiveBytes))
		t.Logf("round %d: java put %.2f s (DataNode %.2f s), tfyarn upload %.2f s (DataNode %.2f s), with the digest from pack %.2f s (DataNode %.2f s)",
			i+1, java[i], dnJava[i], ours[i], dnOurs[2*i], oursKnown[i], dnOurs[2*i+1])
	}
	mb := float64(r.ArchiveBytes) / 1e6
	r.Tfyarn = uploadSummary(ours, mb)
	r.TfyarnKnown = uploadSummary(oursKnown, mb)
	r.Java = uploadSummary(java, mb)
	r.RatioThroughput = round2(r.Tfyarn.MedianMBps / r.Java.MedianMBps)
	if tr := r.Java.MedianS - r.JavaStartupS; tr > 0 {
		r.RatioTransfer = round2((mb / r.Tfyarn.MedianS) / (mb / tr))
		r.RatioTransferKnown = round2((mb / r.TfyarnKnown.MedianS) / (mb / tr))
	}
	r.PackUploadSecond = round2(r.PackSeconds + r.TfyarnKnown.MedianS)
	r.DataNodeTfyarn = uploadSummary(dnOurs, mb)
	r.DataNodeJava = uploadSummary(dnJava, mb)
	r.RatioDataNode = round2(r.DataNodeTfyarn.MedianMBps / r.DataNodeJava.MedianMBps)
	r.LoadAvg = [2]string{load0, loadAvg()}
	writeResults(t, c, "pack", r, packMarkdown(r))
	t.Logf("archive %.0f MB; tfyarn %.1f MB/s, java %.1f MB/s: %.0f%% (transfer only %.0f%%)",
		mb, r.Tfyarn.MedianMBps, r.Java.MedianMBps, 100*r.RatioThroughput, 100*r.RatioTransfer)
}

// dnTrace reads the DataNode's own record of block writes (its clienttrace
// log lines, "bytes: N, op: HDFS_WRITE, cliID: C, ... duration(ns): D") that
// follow offset in the cluster log: the same instrument for both clients,
// measuring only the data transfer, without JVM start-up or connection set-up.
type dnTrace struct {
	log    string
	offset int64
}

var clientTraceRE = regexp.MustCompile(`bytes: (\d+), op: HDFS_WRITE, cliID: ([^,]+),.*duration\(ns\): (\d+)`)

func newDNTrace(t *testing.T, c *clustertest.Cluster) *dnTrace {
	d := &dnTrace{log: filepath.Join(c.Dir, "logs", "cluster.log")}
	d.mark(t)
	return d
}

func (d *dnTrace) mark(t *testing.T) {
	st, err := os.Stat(d.log)
	require.NoError(t, err)
	d.offset = st.Size()
}

// transfer waits (briefly: the DataNode logs as its last ack goes out) for
// the blocks of one whole file of size bytes written by a client whose id
// starts with cliPrefix since the last mark, and returns the summed block
// write durations in seconds.
func (d *dnTrace) transfer(t *testing.T, cliPrefix string, size int64) float64 {
	defer d.mark(t)
	for deadline := time.Now().Add(5 * time.Second); ; {
		b, err := os.ReadFile(d.log)
		require.NoError(t, err)
		bytes, secs := map[string]int64{}, map[string]float64{}
		for _, m := range clientTraceRE.FindAllStringSubmatch(string(b[min(d.offset, int64(len(b))):]), -1) {
			if !strings.HasPrefix(m[2], cliPrefix) {
				continue
			}
			n, _ := strconv.ParseInt(m[1], 10, 64)
			ns, _ := strconv.ParseInt(m[3], 10, 64)
			bytes[m[2]] += n
			secs[m[2]] += float64(ns) / 1e9
		}
		for cli, n := range bytes {
			if n == size {
				return secs[cli]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s* client wrote %d bytes in the DataNode's clienttrace since offset %d (%v)", cliPrefix, size, d.offset, bytes)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

func packOnce(t *testing.T, ctx context.Context, dir, out string, opts envpack.Options) envpack.Manifest {
	f, err := os.Create(out)
	require.NoError(t, err)
	m, err := envpack.Pack(ctx, dir, f, opts)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return m
}

// removeCached deletes the file the bench put into the cache, and its digest
// directory if nothing else (a real job's env.tar.gz) is in it.
func removeCached(t *testing.T, c *clustertest.Cluster, fs *hdfs.FS, p string) {
	require.NoError(t, fs.RemoveAll(context.Background(), p))
	c.Hadoop(t, "hdfs", "dfs", "-rmdir", "--ignore-fail-on-non-empty", path.Dir(p))
}

// benchEnv is the TensorFlow venv if scripts/tfenv.sh made one, else a
// synthetic venv-like tree of ~500 MB (made once, kept in bench/work/).
func benchEnv(t *testing.T, root, work string) (dir, name string) {
	tf := filepath.Join(root, ".venv")
	if real, err := filepath.EvalSymlinks(tf); err == nil {
		// A worktree's .venv may link to another's: copies (cp -al) and
		// packing must see the directory, not the link.
		tf = real
	}
	if _, err := os.Stat(filepath.Join(tf, ".tfenv-stamp")); err == nil {
		return tf, ".venv (scripts/tfenv.sh: TensorFlow, examples/requirements.txt)"
	}
	dir = filepath.Join(work, "synthetic-venv")
	if _, err := os.Stat(filepath.Join(dir, "pyvenv.cfg")); err != nil {
		makeSyntheticVenv(t, dir)
	}
	return dir, "bench/work/synthetic-venv (500 MB: 40% random binaries, 60% text)"
}

func makeSyntheticVenv(t *testing.T, dir string) {
	tmp := dir + ".tmp"
	require.NoError(t, os.RemoveAll(tmp))
	out, err := exec.Command("python3", "-m", "venv", "--without-pip", tmp).CombinedOutput()
	require.NoError(t, err, string(out))
	rng := mrand.New(mrand.NewSource(1))
	words := strings.Fields("import def return class self None True False for in if else elif while try except with as from lambda yield tensor shape dtype numpy array")
	site := filepath.Join(tmp, "lib", "site-packages-synthetic")
	var total int64
	for i := 0; total < 500<<20; i++ {
		pkg := filepath.Join(site, fmt.Sprintf("pkg%03d", i/50))
		require.NoError(t, os.MkdirAll(pkg, 0o755))
		var data []byte
		if i%5 < 2 { // shared libraries: incompressible
			data = make([]byte, 1<<20+rng.Intn(4<<20))
			rng.Read(data)
			require.NoError(t, os.WriteFile(filepath.Join(pkg, fmt.Sprintf("_ext%d.so", i)), data, 0o755))
		} else {
			var b strings.Builder
			for b.Len() < 64<<10+rng.Intn(1<<20) {
				b.WriteString(words[rng.Intn(len(words))])
				b.WriteByte(" \n"[rng.Intn(2)])
			}
			data = []byte(b.String())
			require.NoError(t, os.WriteFile(filepath.Join(pkg, fmt.Sprintf("mod%d.py", i)), data, 0o644))
		}
		total += int64(len(data))
	}
	require.NoError(t, os.Rename(tmp, dir))
}

func uploadSummary(secs []float64, mb float64) uploadStats {
	med := quantile(sortedCopy(secs), 0.5)
	return uploadStats{Seconds: roundAll(secs), MedianS: round2(med), MedianMBps: round2(mb / med)}
}

func randHex(t *testing.T) string {
	var b [6]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	return hex.EncodeToString(b[:])
}

func packMarkdown(r packResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# `tfyarn pack` + HDFS cache upload vs `hdfs dfs -put`\n\n")
	fmt.Fprintf(&b, "Produced by `make bench` (bench/run.sh → bench/pack_bench_test.go).\n\n")
	b.WriteString(r.markdown(", 1 DataNode, replication 1"))
	fmt.Fprintf(&b, "- Environment: %s, %s, %d files, %.0f MB (without __pycache__)\n", r.Env, r.EnvKind, r.EnvFiles, float64(r.EnvBytes)/1e6)
	fmt.Fprintf(&b, "- Load average (1 min) before / after: %s / %s (shared machine: both test clusters' JVMs run beside it)\n\n", r.LoadAvg[0], r.LoadAvg[1])
	fmt.Fprintf(&b, "## Pack (envpack.Pack, page cache warm)\n\n| compressor | time (s) | input MB/s | archive (MB) |\n|---|---:|---:|---:|\n")
	for _, v := range r.Variants {
		fmt.Fprintf(&b, "| %s | %.2f | %.1f | %.1f |\n", v.Name, v.Seconds, v.InMBps, float64(v.ArchiveBytes)/1e6)
	}
	fmt.Fprintf(&b, "\n## Upload of the same %.1f MB archive, %d rounds alternating\n\n", float64(r.ArchiveBytes)/1e6, len(r.Tfyarn.Seconds))
	fmt.Fprintf(&b, "| uploader | median (s) | median MB/s | all runs (s) |\n|---|---:|---:|---|\n")
	fmt.Fprintf(&b, "| tfyarn `hdfs.UploadCached` (connect + sha256 pass + write aside + rename) | %.2f | %.1f | %v |\n", r.Tfyarn.MedianS, r.Tfyarn.MedianMBps, r.Tfyarn.Seconds)
	fmt.Fprintf(&b, "| tfyarn, digest known from pack (`UploadOptions.SHA256`: no separate sha256 pass) | %.2f | %.1f | %v |\n", r.TfyarnKnown.MedianS, r.TfyarnKnown.MedianMBps, r.TfyarnKnown.Seconds)
	fmt.Fprintf(&b, "| Hadoop `hdfs dfs -put -f` (fresh JVM, testcluster/hadoop.sh) | %.2f | %.1f | %v |\n\n", r.Java.MedianS, r.Java.MedianMBps, r.Java.Seconds)
	fmt.Fprintf(&b, "Whole commands, as a user waits for them: tfyarn's throughput is **%.0f%%** of Java's (goal: at least 80%%).\n", 100*r.RatioThroughput)
	fmt.Fprintf(&b, "\nTransfer alone, as the DataNode measured it (its clienttrace block-write durations, summed per\n"+
		"file: no JVM start-up, no connection set-up, same instrument for both):\n\n")
	fmt.Fprintf(&b, "| client | median (s) | median MB/s | all uploads (s) |\n|---|---:|---:|---|\n")
	fmt.Fprintf(&b, "| tfyarn (colinmarc/hdfs), both variants | %.2f | %.1f | %v |\n", r.DataNodeTfyarn.MedianS, r.DataNodeTfyarn.MedianMBps, r.DataNodeTfyarn.Seconds)
	fmt.Fprintf(&b, "| Hadoop DFSClient | %.2f | %.1f | %v |\n\n", r.DataNodeJava.MedianS, r.DataNodeJava.MedianMBps, r.DataNodeJava.Seconds)
	fmt.Fprintf(&b, "On the transfer alone tfyarn reaches **%.0f%%** of Java's throughput.\n", 100*r.RatioDataNode)
	if r.RatioTransfer > 0 {
		fmt.Fprintf(&b, "(Subtracting Java's fixed cost instead — the same `-put` of a 1-byte file, %.2f s — gives %.0f%%, but\n"+
			"JVM start-up varies by a second or more on this loaded machine, so that estimate is noise.)\n", r.JavaStartupS, 100*r.RatioTransfer)
	}
	fmt.Fprintf(&b, "\nPack + upload with tfyarn (digest from pack): %.2f s + %.2f s = **%.2f s**.\n\n", r.PackSeconds, r.TfyarnKnown.MedianS, r.PackUploadSecond)
	fmt.Fprintf(&b, "tfyarn uploads through github.com/colinmarc/hdfs/v2 and hashes what it sends (sha256, to check the\n"+
		"content-addressed name); on this 2-CPU machine the DataNode's JVM shares the CPUs with the client.\n"+
		"Everything uploaded is removed afterwards.\n")
	return b.String()
}
