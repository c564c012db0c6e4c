//go:build bench

package bench

import (
	"archive/tar"
	"archive/zip"
	"compress/flate"
	"compress/gzip"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/envpack"
)

// envFormatRounds is how many times each format is shipped, interleaved.
const envFormatRounds = 1

type envFormatRun struct {
	Format string `json:"format"`
	Round  int    `json:"round"`
	AppID  string `json:"app_id"`
	// MakeS is writing the archive from the packed tar (tar.gz: Pack itself).
	MakeS        float64 `json:"make_s"`
	ArchiveBytes int64   `json:"archive_bytes"`
	// SubmittedS is the client's work before submission: mostly the upload.
	SubmittedS    float64 `json:"submitted_s"`
	UploadedBytes int64   `json:"uploaded_bytes"`
	// LocalizingS is the task container's LOCALIZING → SCHEDULED: download
	// and unpack by the NodeManager.
	LocalizingS float64 `json:"task_localizing_s"`
	WallS       float64 `json:"client_wall_s"`
}

type envFormatResult struct {
	machine
	Env     string         `json:"env"`
	Runs    []envFormatRun `json:"runs"`
	LoadAvg [2]string      `json:"loadavg_1m_before_after"`
}

// TestBenchEnvFormats: which of the archive formats the NodeManager unpacks
// (FSDownload: .tar.gz and .tgz through gzip | tar, .tar through tar,
// .zip through java.util.zip, .jar through RunJar) is localized fastest,
// against what it costs to make and upload. The TensorFlow venv is packed
// once (envpack.Pack, tar.gz), rewritten into each format with a random
// entry of its own (so every archive is new to the HDFS cache and the
// NodeManagers), and shipped with `run --archives` by one application per
// format, the formats interleaved over envFormatRounds rounds.
func TestBenchEnvFormats(t *testing.T) {
	c := clustertest.Require(t)
	bin := tfyarnBin(t, c)
	src, name := benchEnv(t, c.Root, filepath.Join(c.Root, "bench", "work"))
	work := filepath.Join(c.Root, "bench", "work", "envformat")
	require.NoError(t, os.RemoveAll(work))
	require.NoError(t, os.MkdirAll(work, 0o755))
	defer os.RemoveAll(work)

	res := envFormatResult{machine: newMachine(t, c.Root, "envformat"), Env: name}
	res.LoadAvg[0] = loadAvg()
	ctx := context.Background()
	packed := filepath.Join(work, "packed.tar.gz")
	start := time.Now()
	packOnce(t, ctx, src, packed, envpack.Options{})
	packS := round2(time.Since(start).Seconds())

	formats := []string{"tar.gz", "tar", "zip", "jar"}
	logs := logsOf(t, c)
	for round := 1; round <= envFormatRounds; round++ {
		for _, f := range formats {
			archive := filepath.Join(work, fmt.Sprintf("env-%s-%d.%s", strings.ReplaceAll(f, ".", ""), round, f))
			start := time.Now()
			rewriteArchive(t, packed, archive, f)
			run := envFormatRun{Format: f, Round: round, MakeS: round2(time.Since(start).Seconds())}
			if f == "tar.gz" {
				run.MakeS = packS // what tfyarn does: Pack writes it directly
			}
			st, err := os.Stat(archive)
			require.NoError(t, err)
			run.ArchiveBytes = st.Size()
			shipArchive(t, bin, c.Env(), archive, logs, &run)
			t.Logf("%+v", run)
			res.Runs = append(res.Runs, run)
			require.NoError(t, os.Remove(archive))
		}
	}
	res.LoadAvg[1] = loadAvg()
	writeResults(t, c, "envformat", res, envFormatMarkdown(res))
}

// rewriteArchive writes the entries of the packed tar.gz, plus a random
// 64 KiB entry, to out in format f.
func rewriteArchive(t *testing.T, packed, out, f string) {
	in, err := os.Open(packed)
	require.NoError(t, err)
	defer in.Close()
	zr, err := gzip.NewReader(in)
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	w, err := os.Create(out)
	require.NoError(t, err)
	defer w.Close()
	nonce := make([]byte, 64<<10)
	_, err = rand.Read(nonce)
	require.NoError(t, err)

	switch f {
	case "tar.gz", "tar":
		var dst io.Writer = w
		var gz io.WriteCloser
		if f == "tar.gz" {
			gz, err = gzip.NewWriterLevel(w, envpack.DefaultLevel)
			require.NoError(t, err)
			dst = gz
		}
		tw := tar.NewWriter(dst)
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: "bench-nonce.bin", Mode: 0o644, Size: int64(len(nonce)), Typeflag: tar.TypeReg}))
		_, err = tw.Write(nonce)
		require.NoError(t, err)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			require.NoError(t, tw.WriteHeader(h))
			_, err = io.Copy(tw, tr)
			require.NoError(t, err)
		}
		require.NoError(t, tw.Close())
		if gz != nil {
			require.NoError(t, gz.Close())
		}
	default: // zip, jar
		zw := zip.NewWriter(w)
		zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
			return flate.NewWriter(out, envpack.DefaultLevel)
		})
		// Deflate: java.util.zip's stream reader (FSDownload unpacks from
		// the HDFS stream) refuses stored entries written with a data
		// descriptor, which is how a streaming writer stores them.
		method := zip.Deflate
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: "bench-nonce.bin", Method: method})
		require.NoError(t, err)
		_, err = fw.Write(nonce)
		require.NoError(t, err)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			fh := &zip.FileHeader{Name: h.Name, Method: method, Modified: h.ModTime}
			switch h.Typeflag {
			case tar.TypeDir:
				fh.SetMode(0o755 | os.ModeDir)
				fh.Method = zip.Store
			case tar.TypeSymlink:
				// java.util.zip has no links: a zip env would carry the
				// target's path as a file. Counted, as its bytes.
				fh.SetMode(0o644)
			default:
				fh.SetMode(os.FileMode(h.Mode) & 0o777)
			}
			fw, err := zw.CreateHeader(fh)
			require.NoError(t, err)
			if h.Typeflag == tar.TypeSymlink {
				_, err = fw.Write([]byte(h.Linkname))
			} else {
				_, err = io.Copy(fw, tr)
			}
			require.NoError(t, err)
		}
		require.NoError(t, zw.Close())
	}
}

func shipArchive(t *testing.T, bin string, env []string, archive string, logs clusterLogs, run *envFormatRun) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--archives", archive+"#envx", "--worker", "1c,1g", "--name", "bench-envformat",
		"--", "sh", "-c", "test -d envx/lib")
	cmd.Env = env
	o := timedRun(t, cmd)
	run.WallS, run.AppID, run.UploadedBytes = o.WallS, o.AppID, o.UploadedBytes
	run.SubmittedS = waitTimeline(t, logs, run.AppID, o.Start).Submitted
	run.LocalizingS, _ = localizing(t, logs, run.AppID, o.Start)
}

func envFormatMarkdown(r envFormatResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Which archive format the NodeManager localizes fastest\n\n")
	fmt.Fprintf(&b, "The environment %s, packed once by envpack.Pack and rewritten into each format YARN's\n"+
		"FSDownload unpacks (plus a random 64 KiB entry, so each archive is new), then shipped by\n"+
		"`bin/tfyarn run --archives ARCHIVE#envx --worker 1c,1g -- sh -c 'test -d envx/lib'`, formats interleaved.\n"+
		"Alone: `make build && go test -tags bench -run TestBenchEnvFormats -count=1 -v ./bench/`.\n\n", r.Env)
	fmt.Fprintf(&b, "%s- Load average (1 min) before / after: %s / %s (shared machine)\n\n", r.machine.markdown(""), r.LoadAvg[0], r.LoadAvg[1])
	fmt.Fprintf(&b, "| format | round | make (s) | archive (MB) | client work before submission (s) | task container localization (s) | client wall (s) |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.1f | %.2f | %.2f | %.2f |\n", run.Format, run.Round, run.MakeS, float64(run.ArchiveBytes)/1e6, run.SubmittedS, run.LocalizingS, run.WallS)
	}
	fmt.Fprintf(&b, "\n- **make**: tar.gz is envpack.Pack's own time over the env directory (parallel gzip); the others are\n"+
		"  rewritten from it on one core (zip: per-entry deflate at the same level).\n"+
		"- **client work before submission**: `tfyarn run`'s start to the RM's NEW → NEW_SAVING, mostly the upload.\n"+
		"- **localization**: the NodeManager's LOCALIZING → SCHEDULED for the task container (a PRIVATE archive:\n"+
		"  the container localizer, one download at a time; the unpacking code is the same FSDownload as PUBLIC's).\n"+
		"- zip and jar cannot carry symlinks (java.util.zip): a venv's bin/python would arrive as a file holding\n"+
		"  its target's path, so they could not ship an env as is even if faster.\n\n"+
		"## Reading\n\n"+
		"With the NodeManagers setting permissions in-process (the test cluster's LocalPermissions, as production\n"+
		"NodeManagers do with Hadoop's native library), localization goes per byte, not per entry. On a quiet\n"+
		"machine (2026-11-26 10:07, load 1.6-2.0) plain tar localized fastest (7.2 s, no gunzip) against tar.gz\n"+
		"11.1 s, jar 9.8 s and zip 12.5 s, but tar uploads 3.4 times the bytes (1,174 MB vs 342 MB): over\n"+
		"loopback that costs nothing here, on a real cluster every byte crosses the network three times to the\n"+
		"DataNodes and again to each NodeManager. zip and jar cannot carry a venv's symlinks and pack 5-6 times\n"+
		"slower. So tfyarn keeps tar.gz (a third of tar's upload, symlinks kept, one stream to pack in\n"+
		"parallel) and gains on the NodeManager by shipping layers (the public localizer unpacks several at a\n"+
		"time) and by never localizing an unchanged layer again (bench/results/envlayers.md).\n"+
		"Before LocalPermissions each localized file forked a `chmod` (RawLocalFileSystem.setPermission without\n"+
		"libhadoop.so: ~23,000 entries in this venv) and no format was clearly faster: tar.gz 103 s, tar 77 s,\n"+
		"zip 86 s, jar 178 s of localization (2026-11-25, load 16 to 73; an earlier quieter run: 87 / 101 / 86 s).\n")
	return b.String()
}
