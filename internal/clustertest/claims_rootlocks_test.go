package clustertest

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClaimsRootLocksNotInTmp: docs/test-cluster.md "The locks root takes for every cluster of the
// machine (`/etc/hosts`, useradd) are in `/run/tfyarn-testcluster`, root's alone". No script of the
// test cluster and no part of this package takes a lock in world-writable /tmp, where another user
// could hold it first or plant a link in its place.
func TestClaimsRootLocksNotInTmp(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(RepoRoot(), "testcluster", "*.sh"))
	require.NoError(t, err)
	for _, f := range []string{"users.go", "clustertest.go"} {
		files = append(files, filepath.Join(RepoRoot(), "internal", "clustertest", f))
	}
	tmpLock := regexp.MustCompile(`/tmp/[^\s"']*\.lock`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.Empty(t, tmpLock.FindAllString(string(b), -1), "%s takes a lock in /tmp", f)
	}
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "testcluster", "cluster.sh"))
	require.NoError(t, err)
	require.Contains(t, string(b), `install -d -o root -g root -m 0700 "$d"`)
	require.Contains(t, string(b), `9>"$(root_lock_dir)/hosts.lock"`)
	require.Equal(t, "/run/tfyarn-testcluster", RootLockDir)
}
