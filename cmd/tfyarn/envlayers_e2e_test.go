//go:build e2e

package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// TestE2EEnvLayers: a venv ships in layers, each a PUBLIC archive the
// NodeManager localizes, which the launcher assembles into ./env: the task
// imports a large package (a layer of its own) and a small one (in a group)
// and its sys.path is ./env's site-packages. After the small package
// changes, the next job packs and uploads that one layer only, the
// NodeManager downloads that layer only, and the task sees the change.
// `tfyarn cache list` names the layers. The TensorFlow venv of
// scripts/tfenv.sh, shipped in layers, imports and runs TensorFlow (its
// extensions find libtensorflow_framework.so.2 through $ORIGIN, which
// the loader resolves from the linked layer's real path).
func TestE2EEnvLayers(t *testing.T) {
	bin := clustertest.BuildTfyarn(t)
	c := clustertest.Require(t)
	t.Run("small and changed", func(t *testing.T) {
		t.Parallel()
		testEnvLayersChange(t, c, bin)
	})
	t.Run("tensorflow", func(t *testing.T) {
		t.Parallel()
		venv, err := filepath.EvalSymlinks(filepath.Dir(filepath.Dir(tfPython(t, c))))
		require.NoError(t, err)
		stdout, stderr, code := execTfyarnFor(t, c, bin, 10*time.Minute, []string{"XDG_CACHE_HOME=" + t.TempDir()},
			"run", "--worker", "1c,2g", "--name", "e2e-env-layers-tf", "--env", venv, "--output", "json",
			"--", "python", "-c", "import os, stat, tensorflow as tf; print('SUM', int(tf.reduce_sum(tf.constant([1, 2, 3])))); "+
				"print('MODES', *(oct(stat.S_IMODE(os.stat(p).st_mode)) for p in (tf.__file__, os.path.dirname(tf.__file__))))")
		require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		require.Regexp(t, `packed `+regexp.QuoteMeta(venv)+` \(venv, Python 3\.\d+\.\d+\): .* in \d+ layers`, stderr)
		logs := appLogs(t, c, r.AppID, 2)
		require.Contains(t, logs, "SUM 6")
		require.Contains(t, localizingLine(t, c, r.AppID), "/env-layer.tensorflow.tar.gz", "tensorflow is a layer of its own")
		// The NodeManager set the localized layer's permissions as YARN
		// sets a PUBLIC resource's (files 0555, directories 0755), every
		// one in-process (testcluster's LocalPermissions, standing in for
		// production's native library), none by a forked chmod.
		require.Contains(t, logs, "MODES 0o555 0o755")
		require.Len(t, r.Tasks, 1)
		inProcess, byHadoop := localPermissionCounts(t, r.Tasks[0].NodeHTTP)
		require.Greater(t, inProcess, int64(10000), "the tensorflow layer alone holds more than 10,000 files")
		require.Zero(t, byHadoop, "no permission went to Hadoop's chmod")
	})
}

func testEnvLayersChange(t *testing.T, c *clustertest.Cluster, bin string) {
	venv := makeVenv(t)
	sites, err := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages"))
	require.NoError(t, err)
	site := sites[0]
	// bigpkg: 17 MiB of random bytes, above the 16 MiB of a layer of its own.
	blob := make([]byte, 17<<20)
	_, err = rand.Read(blob)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(site, "bigpkg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(site, "bigpkg", "blob.bin"), blob, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(site, "bigpkg", "__init__.py"), []byte("import os\nSIZE = os.path.getsize(os.path.join(os.path.dirname(__file__), 'blob.bin'))\n"), 0o644))
	small := filepath.Join(site, "smallpkg.py")
	require.NoError(t, os.WriteFile(small, []byte("VERSION = 'one'\n"), 0o644))
	time.Sleep(1600 * time.Millisecond) // settled: the pack cache remembers it

	xdg := "XDG_CACHE_HOME=" + t.TempDir()
	// Queue ml-gpu: both jobs' tasks on the one gpu node, whose NodeManager keeps the layers it
	// localized for the first (another node would download every layer).
	args := []string{"run", "--queue", "ml-gpu", "--worker", "1c,256m", "--name", "e2e-env-layers", "--env", venv, "--output", "json",
		"--", "python", "-c", "import sys, os, bigpkg, smallpkg, tfyarn_probe; print('SIZE', bigpkg.SIZE); print('VERSION', smallpkg.VERSION); " +
			"print('SITE', [p for p in sys.path if p.endswith('site-packages')]); print('CWD', os.getcwd())"}
	layerRE := regexp.MustCompile(`packed ` + regexp.QuoteMeta(venv) + ` \(venv, Python 3\.\d+\.\d+\): .* in (\d+) layers(?: \((\d+) changed\))? in `)

	stdout, stderr, code := execTfyarn(t, c, bin, []string{xdg}, args...)
	require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
	r := runJSON(t, stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	m := layerRE.FindStringSubmatch(stderr)
	require.NotNil(t, m, "%s", stderr)
	require.Empty(t, m[2], "a new env: every layer packed")
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 3, "base, bigpkg, a group: %s", stderr)
	require.Greater(t, r.UploadedBytes, int64(17<<20))
	logs := appLogs(t, c, r.AppID, 2)
	require.Contains(t, logs, fmt.Sprintf("SIZE %d", len(blob)))
	require.Contains(t, logs, "VERSION one")
	cwd := regexp.MustCompile(`(?m)^CWD (.*)$`).FindStringSubmatch(logs)
	require.NotNil(t, cwd, logs)
	py := filepath.Base(filepath.Dir(site))
	require.Contains(t, logs, fmt.Sprintf("SITE ['%s/env/lib/%s/site-packages']", cwd[1], py), "sys.path as with one archive unpacked at ./env")
	firstLayers := layerDownloads(t, c)

	// A version no earlier run had: the changed layer is new to the cache.
	two := "two-" + randomHex(t)
	require.NoError(t, os.WriteFile(small, []byte("VERSION = '"+two+"'\n"), 0o644))
	time.Sleep(1600 * time.Millisecond)
	stdout, stderr, code = execTfyarn(t, c, bin, []string{xdg}, args...)
	require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
	r2 := runJSON(t, stdout)
	m = layerRE.FindStringSubmatch(stderr)
	require.NotNil(t, m, "%s", stderr)
	require.Equal(t, "1", m[2], "one small package changed: one layer packed: %s", stderr)
	require.Positive(t, r2.UploadedBytes)
	require.Less(t, r2.UploadedBytes, int64(1<<20), "only the changed layer is uploaded")
	require.Contains(t, appLogs(t, c, r2.AppID, 2), "VERSION "+two)
	// Among the layers the task asked for (others' jobs localize theirs
	// meanwhile on this shared cluster), those downloaded since.
	asked := localizingLine(t, c, r2.AppID)
	var fresh []string
	for p, n := range layerDownloads(t, c) {
		if n > firstLayers[p] && strings.Contains(asked, p) {
			fresh = append(fresh, p)
		}
	}
	require.Len(t, fresh, 1, "the NodeManager downloads the changed layer only: %v", fresh)

	// The cache lists each layer by what it holds.
	stdout, stderr, code = execTfyarn(t, c, bin, nil, "cache", "list")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "env-layer.bigpkg.tar.gz")
	require.Contains(t, stdout, "env-layer.base.tar.gz")
}

// localPermissionCounts reads the test cluster's LocalPermissions counters
// from a NodeManager's /jmx (testcluster/src/.../LocalPermissions.java):
// permissions set in-process, and those handed to Hadoop's own code.
func localPermissionCounts(t *testing.T, nodeHTTP string) (inProcess, byHadoop int64) {
	t.Helper()
	require.NotEmpty(t, nodeHTTP, "the task's NodeManager web address")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+nodeHTTP+"/jmx?qry=dev.tfyarn.testcluster:type=LocalPermissions", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var v struct {
		Beans []struct {
			InProcess *int64
			ByHadoop  *int64
		} `json:"beans"`
	}
	require.NoError(t, json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v))
	require.Len(t, v.Beans, 1, "the NodeManager at %s has the test cluster's local file system (fs.file.impl, fs.AbstractFileSystem.file.impl)", nodeHTTP)
	b := v.Beans[0]
	require.NotNil(t, b.InProcess)
	require.NotNil(t, b.ByHadoop)
	return *b.InProcess, *b.ByHadoop
}

// layerDownloads counts the NodeManagers' public downloads of each env
// layer (by HDFS path) so far.
func layerDownloads(t *testing.T, c *clustertest.Cluster) map[string]int {
	t.Helper()
	b := c.NodeManagerLogs(t)
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`Downloading public resource: \{ hdfs://[^/]+(/\S+/env-layer\.\S+\.tar\.gz),`).FindAllStringSubmatch(string(b), -1) {
		out[strings.TrimSpace(m[1])]++
	}
	return out
}

// localizingLine is the NodeManager's "is localizing: [...]" line for the
// first task container of appID: the resources it asked for.
func localizingLine(t *testing.T, c *clustertest.Cluster, appID string) string {
	t.Helper()
	b := c.NodeManagerLogs(t)
	task := "container_" + strings.TrimPrefix(appID, "application_") + "_01_000002"
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "Container "+task+" is localizing: [") {
			require.Contains(t, line, "env-layer.", "the task asked for the env's layers")
			return line
		}
	}
	t.Fatalf("no localizing line for %s in the cluster log", task)
	return ""
}
