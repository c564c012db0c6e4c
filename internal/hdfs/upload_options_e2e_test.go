//go:build e2e

package hdfs

import (
	"context"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestE2EUploadKnownDigest(t *testing.T) {
	_, fs := connectE2E(t)
	ctx := context.Background()
	local, data := randomFile(t, 2<<20+7)
	digest := digestOf(data)
	t.Cleanup(func() { fs.bestEffortRemove(path.Join(CacheDir(fs.User()), digest)) })

	// A wrong digest is caught while sending: nothing is published under it.
	wrong := strings.Repeat("ab", 32)
	t.Cleanup(func() { fs.bestEffortRemove(path.Join(CacheDir(fs.User()), wrong)) })
	_, _, err := fs.UploadCachedOptions(ctx, local, "env.tar.gz", UploadOptions{SHA256: wrong})
	require.ErrorContains(t, err, "local file changed while uploading")
	ok, err := fs.Exists(ctx, CachePath(fs.User(), wrong, "env.tar.gz"))
	require.NoError(t, err)
	require.False(t, ok)

	_, _, err = fs.UploadCachedOptions(ctx, local, "env.tar.gz", UploadOptions{SHA256: "nothex"})
	require.ErrorContains(t, err, `invalid SHA-256 "nothex"`)

	var last int64
	r, n, err := fs.UploadCachedOptions(ctx, local, "env.tar.gz", UploadOptions{SHA256: digest, Progress: func(s, _ int64) { last = s }})
	require.NoError(t, err)
	require.EqualValues(t, len(data), n)
	require.EqualValues(t, len(data), last)
	require.Equal(t, CachePath(fs.User(), digest, "env.tar.gz"), r.Path)
	require.Equal(t, data, readBack(t, fs, r.Path))
}
