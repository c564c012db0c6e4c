//go:build e2e

package hdfs

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

func connectE2E(t *testing.T) (*clustertest.Cluster, *FS) {
	t.Helper()
	c := clustertest.Require(t)
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	u, err := user.Current()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fs, err := Connect(ctx, conf, u.Username)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, fs.Close()); require.NoError(t, fs.Close()) })
	return c, fs
}

func randomFile(t *testing.T, size int) (string, []byte) {
	t.Helper()
	data := make([]byte, size)
	_, err := rand.Read(data)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "payload")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p, data
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func readBack(t *testing.T, fs *FS, p string) []byte {
	t.Helper()
	f, err := fs.client.Open(p)
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	return b
}

// hadoopStat is Hadoop's own view of a file: length and mtime in ms.
func hadoopStat(t *testing.T, c *clustertest.Cluster, p string) string {
	return strings.TrimSpace(c.Hadoop(t, "hdfs", "dfs", "-stat", "%b %Y", p))
}

func TestE2EUploadCached(t *testing.T) {
	c, fs := connectE2E(t)
	ctx := context.Background()
	local, data := randomFile(t, 5<<20+123)
	digest := digestOf(data)
	t.Cleanup(func() { fs.bestEffortRemove(path.Join(CacheDir(fs.User()), digest)) })

	r, n, err := fs.UploadCached(ctx, local, "env.tar.gz")
	require.NoError(t, err)
	require.EqualValues(t, len(data), n)
	require.Equal(t, CachePath(fs.User(), digest, "env.tar.gz"), r.Path)
	require.Equal(t, "hdfs", r.Scheme)
	require.Equal(t, "localhost", r.Host)
	require.Equal(t, "hdfs://localhost:"+strconv.Itoa(int(r.Port)), c.Facts["fs.defaultFS"])
	require.EqualValues(t, len(data), r.Size)
	require.Equal(t, hadoopyarn.LocalResourceTypeProto_ARCHIVE, r.Type)
	require.Equal(t, hadoopyarn.LocalResourceVisibilityProto_PUBLIC, r.Visibility, "the test cluster's home directories are open to others")

	// The NodeManager checks size and timestamp against what Hadoop's
	// FileSystem reports: check with Hadoop's own client.
	require.Equal(t, fmt.Sprintf("%d %d", r.Size, r.Timestamp), hadoopStat(t, c, r.URL()))
	require.True(t, bytes.Equal(data, readBack(t, fs, r.Path)))

	// Dir and file permissions as documented: others may pass through the
	// directories (YARN's public localizer needs it), not list them.
	fi, err := fs.client.Stat(path.Dir(r.Path))
	require.NoError(t, err)
	require.EqualValues(t, 0o711, fi.Mode().Perm())
	fi, err = fs.client.Stat(r.Path)
	require.NoError(t, err)
	require.EqualValues(t, 0o644, fi.Mode().Perm())

	r2, n2, err := fs.UploadCached(ctx, local, "env.tar.gz")
	require.NoError(t, err)
	require.Zero(t, n2)
	require.Equal(t, r, r2)

	list, err := fs.ListCache(ctx)
	require.NoError(t, err)
	var found bool
	for _, e := range list {
		if e.Digest == digest {
			found = true
			require.Equal(t, "env.tar.gz", e.Name)
			require.EqualValues(t, len(data), e.Size)
			require.Equal(t, r.Timestamp, e.ModTime.UnixMilli())
		}
	}
	require.True(t, found, "ListCache lists the upload")

	// Same content under a second name shares the digest directory.
	rb, nb, err := fs.UploadCachedBytes(ctx, data, "copy.bin")
	require.NoError(t, err)
	require.EqualValues(t, len(data), nb)
	require.Equal(t, hadoopyarn.LocalResourceTypeProto_FILE, rb.Type)
	require.Equal(t, path.Dir(r.Path), path.Dir(rb.Path))
}

func TestE2EConcurrentUploadsOfOneFile(t *testing.T) {
	c, fs := connectE2E(t)
	ctx := context.Background()
	local, data := randomFile(t, 3<<20+7)
	digest := digestOf(data)
	dir := path.Join(CacheDir(fs.User()), digest)
	t.Cleanup(func() { fs.bestEffortRemove(dir) })

	const n = 4
	var wg sync.WaitGroup
	res := make([]Resource, n)
	sent := make([]int64, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			res[i], sent[i], errs[i] = fs.UploadCached(ctx, local, "env.tgz")
		}(i)
	}
	close(start)
	wg.Wait()
	for i := 0; i < n; i++ {
		require.NoError(t, errs[i], "uploader %d", i)
		require.Equal(t, res[0], res[i], "every uploader describes the same file")
	}
	t.Logf("bytes sent per uploader: %v", sent)

	entries, err := fs.readDir(ctx, dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "exactly one cached file and no temporaries left")
	require.Equal(t, "env.tgz", entries[0].Name())
	require.Equal(t, digest, digestOf(readBack(t, fs, res[0].Path)))
	require.Equal(t, fmt.Sprintf("%d %d", res[0].Size, res[0].Timestamp), hadoopStat(t, c, res[0].Path))
}

func TestE2EStaging(t *testing.T) {
	c, fs := connectE2E(t)
	ctx := context.Background()
	appID := fmt.Sprintf("application_%d_0001", time.Now().UnixNano())

	dir, err := fs.CreateStaging(ctx, appID)
	require.NoError(t, err)
	require.Equal(t, StagingDir(fs.User(), appID), dir)
	fi, err := fs.client.Stat(dir)
	require.NoError(t, err)
	require.EqualValues(t, 0o700, fi.Mode().Perm())
	_, err = fs.CreateStaging(ctx, appID)
	require.NoError(t, err, "CreateStaging is idempotent")

	job := []byte(`{"chief":{"instances":1}}`)
	r, err := fs.UploadBytes(ctx, job, path.Join(dir, "job.json"))
	require.NoError(t, err)
	require.Equal(t, hadoopyarn.LocalResourceVisibilityProto_APPLICATION, r.Visibility)
	require.Equal(t, hadoopyarn.LocalResourceTypeProto_FILE, r.Type)
	require.Equal(t, fmt.Sprintf("%d %d", len(job), r.Timestamp), hadoopStat(t, c, r.Path))

	local, data := randomFile(t, 1<<20)
	r2, err := fs.Upload(ctx, local, path.Join(dir, "train.py"))
	require.NoError(t, err)
	require.EqualValues(t, len(data), r2.Size)

	// Uploading over an existing staging file is refused, and says where.
	_, err = fs.UploadBytes(ctx, job, path.Join(dir, "job.json"))
	require.ErrorIs(t, err, os.ErrExist)
	require.ErrorContains(t, err, "hdfs: upload "+path.Join(dir, "job.json")+": ")

	require.NoError(t, fs.RemoveStaging(ctx, appID))
	ok, err := fs.Exists(ctx, dir)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, fs.RemoveStaging(ctx, appID), "a missing staging dir is fine")
}

func TestE2ECleanCache(t *testing.T) {
	c, admin := connectE2E(t)
	ctx := context.Background()
	// Cleaning everything must not hit the caches of other tests sharing the
	// cluster: act as a user of our own, whose home the superuser creates.
	const cleaner = "tfyarn-e2e-cleaner"
	home := HomeDir(cleaner)
	require.NoError(t, admin.mkdirAll(ctx, home, 0o755))
	require.NoError(t, admin.client.Chown(home, cleaner, ""))
	t.Cleanup(func() { admin.bestEffortRemove(home) })
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	fs, err := Connect(ctx, conf, cleaner)
	require.NoError(t, err)
	defer fs.Close()

	data := []byte("clean me " + time.Now().String())
	r, _, err := fs.UploadCachedBytes(ctx, data, "x.txt")
	require.NoError(t, err)
	t.Cleanup(func() { fs.bestEffortRemove(path.Dir(r.Path)) })

	removed, err := fs.CleanCache(ctx, time.Hour)
	require.NoError(t, err)
	for _, e := range removed {
		require.NotEqual(t, r.Path, e.Path, "a fresh entry survives")
	}
	// Everything older than "now" goes, including ours; the digest dir too.
	time.Sleep(10 * time.Millisecond)
	removed, err = fs.CleanCache(ctx, 0)
	require.NoError(t, err)
	var gone bool
	for _, e := range removed {
		gone = gone || e.Path == r.Path
	}
	require.True(t, gone)
	ok, err := fs.Exists(ctx, path.Dir(r.Path))
	require.NoError(t, err)
	require.False(t, ok)
}

func TestE2EDeadNameNode(t *testing.T) {
	c := clustertest.Require(t)
	// A copy of the cluster's configuration whose fs.defaultFS points at a
	// port nothing listens on.
	addr := closedAddr(t)
	dir := t.TempDir()
	core := fmt.Sprintf(`<?xml version="1.0"?><configuration>
<property><name>fs.defaultFS</name><value>hdfs://%s</value></property>
</configuration>`, addr)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "core-site.xml"), []byte(core), 0o644))
	for _, f := range []string{"hdfs-site.xml", "yarn-site.xml"} {
		if b, err := os.ReadFile(filepath.Join(c.ConfDir, f)); err == nil {
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
		}
	}
	conf, err := hadoopconf.LoadDir(dir)
	require.NoError(t, err)

	start := time.Now()
	_, err = Connect(context.Background(), conf, "nobody")
	require.Less(t, time.Since(start), 15*time.Second)
	require.Error(t, err)
	require.Contains(t, err.Error(), "hdfs: cannot reach the NameNode at "+addr+": connection refused")
	require.Contains(t, err.Error(), filepath.Join(dir, "core-site.xml"))
}

func TestE2ERenameNeverReplaces(t *testing.T) {
	_, fs := connectE2E(t)
	ctx := context.Background()
	dir := path.Join(BaseDir(fs.User()), fmt.Sprintf("renametest-%d", time.Now().UnixNano()))
	t.Cleanup(func() { fs.bestEffortRemove(dir) })
	require.NoError(t, fs.mkdirAll(ctx, dir, 0o755))
	a, err := fs.UploadBytes(ctx, []byte("first"), path.Join(dir, "a"))
	require.NoError(t, err)
	_, err = fs.UploadBytes(ctx, []byte("second!"), path.Join(dir, "b"))
	require.NoError(t, err)

	err = fs.renameNoReplace(ctx, path.Join(dir, "b"), a.Path)
	require.Error(t, err)
	require.True(t, isExists(err), "%v", err)
	after, err := fs.Stat(ctx, a.Path, a.Visibility)
	require.NoError(t, err)
	require.Equal(t, a, after, "the destination is untouched")

	require.NoError(t, fs.renameNoReplace(ctx, path.Join(dir, "b"), path.Join(dir, "c")))
	require.Equal(t, []byte("second!"), readBack(t, fs, path.Join(dir, "c")))
}
