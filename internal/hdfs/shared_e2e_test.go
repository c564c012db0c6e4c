//go:build e2e

package hdfs

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// Who is trusted in a shared cache directory, against the real NameNode:
// another user's entry is never used, not even with the right content;
// once the directory's owner or the superuser adopted it (a verified copy
// in their name), everyone uses it unread; the superuser's own entry is
// used unread; one closed to others, or writable by others, is refused; an
// entry whose content is not its name's is not adopted; only an
// administrator adopts.
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
	require.NoError(t, admin.MakeSharedCacheDir(ctx, dir, SharedCacheOptions{}))
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
	var notices []string
	bobsCache := func() *SharedCache { // a new submission of bob's
		sc, err := bob.OpenSharedCache(ctx, dir, SharedCacheOptions{Notice: func(m string) { notices = append(notices, m) }})
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

	// A file the user's own cache would keep private (a script) is
	// readable by all in the shared directory: sharing is what it is for.
	local := filepath.Join(t.TempDir(), "train.py")
	require.NoError(t, os.WriteFile(local, []byte("print('hi "+id+"')\n"), 0o644))
	rs, _, err := aliceCache.UploadOptions(ctx, local, "train.py", UploadOptions{Access: Private})
	require.NoError(t, err)
	require.Equal(t, dir, path.Dir(rs.Path))
	require.EqualValues(t, 0o644, mustStat(t, admin, rs.Path).Mode().Perm())
	require.Equal(t, hadoopyarn.LocalResourceVisibilityProto_PUBLIC, rs.Visibility)
	require.NoError(t, admin.RemoveAll(ctx, rs.Path))

	// Alice's entry, with the right content, is not bob's to use.
	_, ok, err := bobsCache().Lookup(ctx, digestOf(data), "env.tar.gz", int64(len(data)), Public)
	require.NoError(t, err)
	require.False(t, ok, "refused, and bob's own cache lacks it")
	require.Len(t, notices, 1)
	require.Contains(t, notices[0], "shared cache: not using "+r.Path+" (owned by tfyarn-alice-"+id+"): another user's entry is never used")
	require.Contains(t, notices[0], "tfyarn cache adopt; shipping it through your own cache "+CacheDir(bob.User())+" instead")

	// Bob's upload of the same content then goes to his own cache, once
	// per submission: the refusal is not said twice.
	notices = nil
	sc := bobsCache()
	local = filepath.Join(t.TempDir(), "env.tar.gz")
	require.NoError(t, os.WriteFile(local, data, 0o644))
	rb, n, err := sc.UploadOptions(ctx, local, "env.tar.gz", UploadOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(len(data)), n)
	require.Equal(t, CachePath(bob.User(), digestOf(data), "env.tar.gz"), rb.Path)
	_, n, err = sc.UploadOptions(ctx, local, "env.tar.gz", UploadOptions{})
	require.NoError(t, err)
	require.Zero(t, n)
	require.Len(t, notices, 1, strings.Join(notices, "\n"))

	// Only an administrator adopts.
	_, err = sc.Adopt(ctx, r.Path)
	var na *NotAdminError
	require.ErrorAs(t, err, &na)
	require.EqualError(t, err, "only the owner of "+dir+" ("+admin.User()+") or the HDFS superuser ("+admin.User()+") may adopt its entries, not "+bob.User())

	// The superuser adopts alice's entry: a verified copy in its name,
	// which bob then uses unread.
	adminCache, err := admin.OpenSharedCache(ctx, dir, SharedCacheOptions{})
	require.NoError(t, err)
	a, err := adminCache.Adopt(ctx, r.Path)
	require.NoError(t, err)
	require.Equal(t, Adopted{Path: r.Path, Owner: alice.User(), Size: int64(len(data))}, a)
	notices = nil
	got, ok, err := bobsCache().Lookup(ctx, digestOf(data), "env.tar.gz", int64(len(data)), Public)
	require.NoError(t, err)
	require.True(t, ok)
	require.Empty(t, notices, "the administrator's: used unread")
	require.Equal(t, r.Path, got.Path)
	require.NotEqual(t, r.Timestamp, got.Timestamp, "a new file: NodeManagers download it again")
	require.Equal(t, hadoopyarn.LocalResourceVisibilityProto_PUBLIC, got.Visibility)
	fi, err := admin.stat(ctx, r.Path)
	require.NoError(t, err)
	require.Equal(t, admin.User(), fileOwner(fi))
	require.EqualValues(t, 0o644, fi.Mode().Perm())
	require.True(t, bytes.Equal(data, readBack(t, admin, r.Path)))
	a, err = adminCache.Adopt(ctx, r.Path)
	require.NoError(t, err)
	require.True(t, a.Trusted, "adopted already: nothing to do")
	require.Equal(t, got.Timestamp, mustStat(t, admin, r.Path).ModTime().UnixMilli())

	// Mallory's entry with other bytes under a name is not adopted, and left.
	mallory := connectAs("tfyarn-mallory-" + id)
	good := []byte("the right bytes " + id)
	planted := SharedPath(dir, digestOf(good), "data.txt")
	_, err = mallory.UploadBytes(ctx, bytes.ToUpper(good), planted)
	require.NoError(t, err)
	var reports []string
	require.NoError(t, adminCache.AdoptAll(ctx, func(a Adopted, err error) {
		reports = append(reports, path.Base(a.Path)+" "+a.Owner+" "+errString(err))
	}))
	var ae *AdoptError
	_, err = adminCache.Adopt(ctx, planted)
	require.ErrorAs(t, err, &ae)
	require.Contains(t, err.Error(), "not adopting "+planted+" (owned by "+mallory.User()+"): its content's sha256 is ")
	require.Equal(t, mallory.User(), fileOwner(mustStat(t, admin, planted)), "left as it is")
	require.ElementsMatch(t, []string{path.Base(r.Path) + " " + admin.User() + " ", path.Base(planted) + " " + mallory.User() + " " + err.Error()}, reports)
	_, ok, err = bobsCache().Lookup(ctx, digestOf(good), "data.txt", int64(len(good)), Private)
	require.NoError(t, err)
	require.False(t, ok)

	// The superuser's entry is used unread; one closed to others is
	// refused, and so is one others may write.
	adminData := []byte("from the administrator " + id)
	ra, _, err := adminCache.UploadBytes(ctx, adminData, "tfyarn")
	require.NoError(t, err)
	notices = nil
	got, ok, err = bobsCache().Lookup(ctx, digestOf(adminData), "tfyarn", int64(len(adminData)), Public)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, ra.Path, got.Path)
	require.Empty(t, notices, "trusted without reading")

	require.NoError(t, admin.client.Chmod(ra.Path, 0o600))
	_, ok, err = bobsCache().Lookup(ctx, digestOf(adminData), "tfyarn", int64(len(adminData)), Public)
	require.NoError(t, err)
	require.False(t, ok)
	require.Len(t, notices, 1)
	require.Contains(t, notices[0], ": it is not readable by others; shipping it through your own cache")

	notices = nil
	require.NoError(t, admin.client.Chmod(ra.Path, 0o664))
	_, ok, err = bobsCache().Lookup(ctx, digestOf(adminData), "tfyarn", int64(len(adminData)), Public)
	require.NoError(t, err)
	require.False(t, ok)
	require.Len(t, notices, 1)
	require.Contains(t, notices[0], ": others than its owner may write it; shipping it through your own cache")

	// An administrator the configuration names (tfyarn.cache.trusted-owners),
	// not the superuser, makes a directory and adopts: it may replace
	// others' entries of its sticky directory. Without that setting, her
	// directory is not trusted, and the same for one she makes unnamed.
	carol := connectAs("tfyarn-carol-" + id)
	named := SharedCacheOptions{Admins: []string{carol.User()}, AdminsFrom: "tfyarn.cache.trusted-owners in test"}
	carolsDir := "/tmp/tfyarn-shared-carol-" + id
	var ue *UntrustedCacheError
	require.ErrorAs(t, carol.MakeSharedCacheDir(ctx, carolsDir, SharedCacheOptions{}), &ue)
	require.EqualError(t, ue, "shared cache "+carolsDir+" is not trusted: other users' jobs would not trust a directory of "+carol.User()+
		", who is neither the HDFS superuser ("+admin.User()+") nor an administrator named in the configuration")
	_, err = admin.stat(ctx, carolsDir)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing made")
	require.NoError(t, carol.MakeSharedCacheDir(ctx, carolsDir, named))
	t.Cleanup(func() { admin.bestEffortRemove(carolsDir) })
	ac, err := alice.OpenSharedCache(ctx, carolsDir, named)
	require.NoError(t, err)
	rc, _, err := ac.UploadBytes(ctx, good, "data.txt")
	require.NoError(t, err)
	cc, err := carol.OpenSharedCache(ctx, carolsDir, named)
	require.NoError(t, err)
	a, err = cc.Adopt(ctx, rc.Path)
	require.NoError(t, err)
	require.Equal(t, alice.User(), a.Owner)
	require.Equal(t, carol.User(), fileOwner(mustStat(t, admin, rc.Path)))
	bobNamed := named
	bobNamed.Notice = func(m string) { t.Errorf("unexpected notice: %s", m) }
	bc, err := bob.OpenSharedCache(ctx, carolsDir, bobNamed)
	require.NoError(t, err)
	require.Equal(t, "shared cache "+carolsDir+": trusting entries adopted by "+admin.User()+" (the HDFS superuser) and "+carol.User()+" (tfyarn.cache.trusted-owners in test)", bc.Trusts())
	got, ok, err = bc.Lookup(ctx, digestOf(good), "data.txt", int64(len(good)), Private)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, rc.Path, got.Path)
	_, err = bob.OpenSharedCache(ctx, carolsDir, SharedCacheOptions{})
	require.ErrorAs(t, err, &ue)
	require.EqualError(t, ue, "shared cache "+carolsDir+" is not trusted: it is owned by "+carol.User()+
		", who is neither the HDFS superuser ("+admin.User()+") nor an administrator named in the configuration (that owner could replace any entry)")
}

func mustStat(t *testing.T, fs *FS, p string) os.FileInfo {
	t.Helper()
	fi, err := fs.stat(context.Background(), p)
	require.NoError(t, err)
	return fi
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	var ae *AdoptError
	if errors.As(err, &ae) {
		return ae.Error()
	}
	return err.Error()
}
