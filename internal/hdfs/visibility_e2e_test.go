//go:build e2e

package hdfs

import (
	"context"
	"os/user"
	"path"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// A cached file is PUBLIC only when YARN's FSDownload.isPublic would say
// so: a home directory closed to others makes it PRIVATE, opening it makes
// the same file PUBLIC.
func TestE2ECacheVisibilityFollowsPermissions(t *testing.T) {
	c, admin := connectE2E(t) // the cluster's superuser: it started the NameNode
	conf, err := hadoopconf.LoadDir(c.ConfDir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const other = "tfyarn-closed-home"
	home := HomeDir(other)
	require.NoError(t, admin.removeAll(ctx, home))
	require.NoError(t, admin.mkdirAll(ctx, home, 0o700))
	require.NoError(t, admin.client.Chown(home, other, "supergroup"))
	t.Cleanup(func() { admin.bestEffortRemove(home) })

	connectAs := func() *FS {
		fs, err := Connect(ctx, conf, other)
		require.NoError(t, err)
		t.Cleanup(func() { fs.Close() })
		return fs
	}
	local, _ := randomFile(t, 1<<10)
	r, n, err := connectAs().UploadCached(ctx, local, "env.tar.gz")
	require.NoError(t, err)
	require.Positive(t, n)
	require.Equal(t, hadoopyarn.LocalResourceVisibilityProto_PRIVATE, r.Visibility, "%s is 0700", home)

	require.NoError(t, admin.client.Chmod(home, 0o755))
	r2, n, err := connectAs().UploadCached(ctx, local, "env.tar.gz")
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, hadoopyarn.LocalResourceVisibilityProto_PUBLIC, r2.Visibility)
	require.Equal(t, r.Path, r2.Path)

	u, err := user.Current()
	require.NoError(t, err)
	require.Equal(t, u.Username, admin.User())
	require.Equal(t, path.Join(home, ".tfyarn", "cache"), path.Dir(path.Dir(r.Path)))
}
