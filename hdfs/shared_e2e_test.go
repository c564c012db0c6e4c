//go:build e2e

package hdfs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/hadoopconf"
	"github.com/tfyarn/tfyarn/yarnpb/hadoopyarn"
)

// Who is trusted in a shared cache directory, against the real NameNode:
// another user's entry is read once and remembered only while it stays the
// same file; the superuser's is used unread; one closed to others, or
// replaced after the check, is refused.
func TestE2ESharedCacheTrust(t *testing.T) {
	c, admin := connectE2E(t)
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	id := hex.EncodeToString(rnd[:])
	dir := "/tmp/tfyarn-shared-trust-" + id
	require.NoError(t, admin.MakeSharedCacheDir(ctx, dir))
	t.Cleanup(func() { admin.bestEffortRemove(dir) })
	connectAs := func(user string) *FS {
		fs, err := Connect(ctx, conf, user)
		require.NoError(t, err)
		t.Cleanup(func() { fs.Close() })
		return fs
	}
	alice, bob := connectAs("tfyarn-alice-"+id), connectAs("tfyarn-bob-"+id)
	home := HomeDir(bob.User()) // for bob's own cache
	require.NoError(t, admin.mkdirAll(ctx, home, 0o755))
	require.NoError(t, admin.client.Chown(home, bob.User(), "supergroup"))
	t.Cleanup(func() { admin.bestEffortRemove(home) })
	memo := &VerifiedMemo{Dir: filepath.Join(t.TempDir(), "verified")}
	var notices []string
	bobsCache := func() *SharedCache { // a new submission of bob's
		sc, err := bob.OpenSharedCache(ctx, dir, SharedCacheOptions{Memo: memo, Notice: func(m string) { notices = append(notices, m) }})
		require.NoError(t, err)
		return sc
	}
	aliceCache, err := alice.OpenSharedCache(ctx, dir, SharedCacheOptions{})
	require.NoError(t, err)

	data := make([]byte, 3<<20)
	_, _ = rand.Read(data)
	r, n, err := aliceCache.UploadBytes(ctx, data, "env.tar.gz")
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), n)
	require.Equal(t, SharedPath(dir, digestOf(data), "env.tar.gz"), r.Path)
	require.Equal(t, hadoopyarn.LocalResourceVisibilityProto_PUBLIC, r.Visibility)

	got, ok, err := bobsCache().Lookup(ctx, digestOf(data), "env.tar.gz", int64(len(data)))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, r, got, "the same file, with the modification time bob checked")
	require.Len(t, notices, 1)
	require.Contains(t, notices[0], "shared cache: verified "+r.Path+" (owned by tfyarn-alice-"+id+"): its content matches its name (3145728 bytes read in ")

	notices = nil
	_, ok, err = bobsCache().Lookup(ctx, digestOf(data), "env.tar.gz", int64(len(data)))
	require.NoError(t, err)
	require.True(t, ok)
	require.Empty(t, notices, "remembered: not read again")

	// Alice replaces her entry with other bytes of the same length.
	require.NoError(t, alice.RemoveAll(ctx, r.Path))
	_, err = alice.UploadBytes(ctx, bytes.Repeat([]byte{'x'}, len(data)), r.Path)
	require.NoError(t, err)
	_, ok, err = bobsCache().Lookup(ctx, digestOf(data), "env.tar.gz", int64(len(data)))
	require.NoError(t, err)
	require.False(t, ok, "refused, and bob's own cache lacks it")
	require.Len(t, notices, 1)
	require.Contains(t, notices[0], "shared cache: not using "+r.Path+" (owned by tfyarn-alice-"+id+"): its content's sha256 is ")

	// Bob's upload of the same content then goes to his own cache, once
	// per submission: the refusal is not said twice.
	notices = nil
	sc := bobsCache()
	local := filepath.Join(t.TempDir(), "env.tar.gz")
	require.NoError(t, os.WriteFile(local, data, 0o644))
	rb, n, err := sc.UploadOptions(ctx, local, "env.tar.gz", UploadOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), n)
	require.Equal(t, CachePath(bob.User(), digestOf(data), "env.tar.gz"), rb.Path)
	_, n, err = sc.UploadOptions(ctx, local, "env.tar.gz", UploadOptions{})
	require.NoError(t, err)
	require.Zero(t, n)
	require.Len(t, notices, 1, strings.Join(notices, "\n"))

	// The superuser's entry is used unread; one closed to others is refused.
	adminData := []byte("from the administrator " + id)
	ra, _, err := func() (Resource, int64, error) {
		sa, err := admin.OpenSharedCache(ctx, dir, SharedCacheOptions{})
		require.NoError(t, err)
		return sa.UploadBytes(ctx, adminData, "tfyarn")
	}()
	require.NoError(t, err)
	notices = nil
	got, ok, err = bobsCache().Lookup(ctx, digestOf(adminData), "tfyarn", int64(len(adminData)))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, ra.Path, got.Path)
	require.Empty(t, notices, "trusted without reading")

	require.NoError(t, admin.client.Chmod(ra.Path, 0o600))
	_, ok, err = bobsCache().Lookup(ctx, digestOf(adminData), "tfyarn", int64(len(adminData)))
	require.NoError(t, err)
	require.False(t, ok)
	require.Len(t, notices, 1)
	require.Contains(t, notices[0], ": it is not readable by others; shipping it through your own cache")
}
