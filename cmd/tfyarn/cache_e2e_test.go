//go:build e2e

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// TestE2ECacheListClean runs as a user of its own: cleaning with --older-than 0
// must not touch the cache of tests running beside it.
func TestE2ECacheListClean(t *testing.T) {
	c := clustertest.Require(t)
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	user := c.User(t, "tfyarn-cache-e2e-"+hex.EncodeToString(rnd[:]))
	home := hdfs.HomeDir(user)
	c.Hadoop(t, "hdfs", "dfs", "-mkdir", "-p", home)
	c.Hadoop(t, "hdfs", "dfs", "-chown", user, home)
	t.Cleanup(func() { c.Hadoop(t, "hdfs", "dfs", "-rm", "-r", "-f", "-skipTrash", home) })
	t.Setenv("HADOOP_USER_NAME", user) // restored before the cleanup above runs

	list := func() cacheListing {
		stdout, stderr, code := runEnvCLI(t, "--conf-dir", c.ConfDir, "cache", "list", "--output", "json")
		require.Equal(t, exitOK, code, stderr)
		var l cacheListing
		require.NoError(t, json.Unmarshal([]byte(stdout), &l))
		return l
	}
	require.Empty(t, list().Entries, "a user without a cache has an empty one")
	stdout, _, code := runEnvCLI(t, "--conf-dir", c.ConfDir, "cache", "list")
	require.Equal(t, exitOK, code)
	require.Equal(t, "cached 0 files, 0 B\n", stdout)

	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	fs, err := hdfs.Connect(ctx, conf, user)
	require.NoError(t, err)
	defer fs.Close()

	data := make([]byte, 3<<20+5)
	_, _ = rand.Read(data)
	local := filepath.Join(t.TempDir(), "env.tar.gz")
	require.NoError(t, os.WriteFile(local, data, 0o644))
	var last [2]int64
	var calls int
	_, n, err := fs.UploadCachedOptions(ctx, local, "env.tar.gz", hdfs.UploadOptions{
		Progress: func(sent, total int64) { calls++; last = [2]int64{sent, total} },
	})
	require.NoError(t, err)
	require.EqualValues(t, len(data), n)
	require.Equal(t, [2]int64{int64(len(data)), int64(len(data))}, last)
	require.GreaterOrEqual(t, calls, 4, "0, then once per MiB")
	_, _, err = fs.UploadCachedBytes(ctx, []byte("print('hi')\n"), "train.py")
	require.NoError(t, err)

	l := list()
	require.Len(t, l.Entries, 2)
	require.Equal(t, 2, l.Files)
	require.EqualValues(t, len(data)+12, l.Bytes)
	stdout, _, code = runEnvCLI(t, "--conf-dir", c.ConfDir, "cache", "list")
	require.Equal(t, exitOK, code)
	require.Contains(t, stdout, "DIGEST")
	require.Contains(t, stdout, "env.tar.gz")
	require.Contains(t, stdout, "3.0 MiB")
	require.Contains(t, stdout, "cached 2 files, 3.0 MiB\n")

	stdout, _, code = runEnvCLI(t, "--conf-dir", c.ConfDir, "cache", "clean", "--older-than", "30d")
	require.Equal(t, exitOK, code)
	require.Equal(t, "removed 0 files, 0 B\n", stdout)

	stdout, _, code = runEnvCLI(t, "--conf-dir", c.ConfDir, "cache", "clean", "--older-than", "0d", "--dry-run")
	require.Equal(t, exitOK, code)
	require.Contains(t, stdout, "would remove 2 files, 3.0 MiB\n")
	require.Len(t, list().Entries, 2, "a dry run removes nothing")

	stdout, stderr, code := runEnvCLI(t, "--conf-dir", c.ConfDir, "cache", "clean", "--older-than", "0d", "--output", "json")
	require.Equal(t, exitOK, code, stderr)
	var cl cacheListing
	require.NoError(t, json.Unmarshal([]byte(stdout), &cl))
	require.Equal(t, 2, cl.Files)
	require.NotNil(t, cl.Removed)
	require.True(t, *cl.Removed)
	require.Empty(t, list().Entries)
	ls := c.Hadoop(t, "hdfs", "dfs", "-ls", hdfs.CacheDir(user))
	require.Empty(t, ls, "digest directories are removed with their last file")
}
