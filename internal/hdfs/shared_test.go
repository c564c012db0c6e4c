package hdfs

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSharedPathRoundTrip(t *testing.T) {
	d := strings.Repeat("ab", 32)
	p := SharedPath("/shared/cache", d, "env.tar.gz")
	require.Equal(t, "/shared/cache/"+d+"-env.tar.gz", p)
	got, ok := SharedDigest("/shared/cache", p)
	require.True(t, ok)
	require.Equal(t, d, got)
	for _, bad := range []string{
		"/shared/other/" + d + "-env.tar.gz", // another directory
		"/shared/cache/" + d + "env.tar.gz",  // no dash
		"/shared/cache/" + d[:63] + "-x",     // short digest
		"/shared/cache/" + d + "-",           // no name
		CachePath("alice", d, "env.tar.gz"),  // the per-user layout
	} {
		_, ok := SharedDigest("/shared/cache", bad)
		require.False(t, ok, bad)
	}
}

func TestSharedCacheErrorSaysHowToMakeIt(t *testing.T) {
	err := &SharedCacheError{Dir: "/shared/cache", Problem: "does not exist"}
	require.Equal(t, "shared cache directory /shared/cache does not exist; an administrator creates it like /tmp: "+
		"hdfs dfs -mkdir -p /shared/cache && hdfs dfs -chmod 1777 /shared/cache", err.Error())
}

func TestAdoptErrorsSayWhatToDo(t *testing.T) {
	require.Equal(t, "only the owner of /shared/cache (hdfs) or the HDFS superuser (root) may adopt its entries, not bob",
		(&NotAdminError{Dir: "/shared/cache", User: "bob", DirOwner: "hdfs", SuperUser: "root"}).Error())
	require.Equal(t, "not adopting /shared/cache/x (owned by bob): its content's sha256 is 0123456789ab, not the one its name says; "+
		"it is left as it is (remove it: hdfs dfs -rm /shared/cache/x)",
		(&AdoptError{Path: "/shared/cache/x", Owner: "bob", Problem: "its content's sha256 is 0123456789ab, not the one its name says"}).Error())
}

// Cache files and directories of earlier versions are closed, never opened.
func TestTightened(t *testing.T) {
	for _, tc := range []struct{ mode, perm, want os.FileMode }{
		{0o755, cacheDirPerm, 0o711},
		{0o711, cacheDirPerm, 0o711},
		{0o700, cacheDirPerm, 0o700}, // closed further by its owner: left so
		{0o777, cacheDirPerm, 0o711},
		{0o555, cacheDirPerm, 0o711}, // the owner keeps what it needs
		{0o755, historyDirPerm, 0o700},
		{0o644, privateFilePerm, 0o600},
		{0o644, publicFilePerm, 0o644},
		{0o600, publicFilePerm, 0o600}, // private stays private
		{0o666, publicFilePerm, 0o644},
	} {
		require.Equal(t, tc.want, tightened(tc.mode, tc.perm), "%04o to %04o", tc.mode, tc.perm)
	}
	require.Equal(t, os.FileMode(0o600), Private.perm())
	require.Equal(t, os.FileMode(0o644), Public.perm())
}
