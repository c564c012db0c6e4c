package hdfs

import (
	"os"
	"path/filepath"
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

// A verification holds only for the exact entry it was made of.
func TestVerifiedMemo(t *testing.T) {
	m := &VerifiedMemo{Dir: filepath.Join(t.TempDir(), "verified")}
	e := verifiedEntry{FS: "hdfs://nn:8020", Path: "/shared/x-env.tar.gz", Size: 10, ModTime: 1234, Owner: "alice", FileID: 16400, SHA256: strings.Repeat("0", 64)}
	require.False(t, m.holds(e), "nothing remembered yet")
	require.NoError(t, m.remember(e))
	require.True(t, m.holds(e))
	for name, change := range map[string]func(*verifiedEntry){
		"another filesystem":          func(v *verifiedEntry) { v.FS = "hdfs://other:8020" },
		"appended to":                 func(v *verifiedEntry) { v.Size = 11 },
		"touched":                     func(v *verifiedEntry) { v.ModTime = 1235 },
		"replaced by another user":    func(v *verifiedEntry) { v.Owner = "mallory" },
		"replaced, same mtime forged": func(v *verifiedEntry) { v.FileID = 16401 },
	} {
		v := e
		change(&v)
		require.False(t, m.holds(v), name)
	}
	var none *VerifiedMemo
	require.False(t, none.holds(e))
	require.NoError(t, none.remember(e))

	// Unreadable records are misses, not errors.
	files, err := os.ReadDir(m.Dir)
	require.NoError(t, err)
	require.Len(t, files, 1)
	require.NoError(t, os.WriteFile(filepath.Join(m.Dir, files[0].Name()), []byte("{"), 0o600))
	require.False(t, m.holds(e))
}
