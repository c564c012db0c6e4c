//go:build bench

package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// clusterLogs is a test cluster's own logs: logs/cluster.log (the ResourceManager, HDFS and, on
// the one-JVM shape TC_NM_HOSTS=0, MiniYARNCluster's NodeManagers) and, on the default shape,
// each NodeManager process's logs/nm-I.log.
type clusterLogs []string

// logsOf lists c's logs. With NodeManager processes of their own (its ready file's
// nodemanager-hosts=true), one nm-I.log per NodeManager it counts, or the benchmark fails.
func logsOf(t testing.TB, c *clustertest.Cluster) clusterLogs {
	t.Helper()
	nms, err := filepath.Glob(filepath.Join(c.Dir, "logs", "nm-*.log"))
	require.NoError(t, err)
	if c.Facts["nodemanager-hosts"] == "true" {
		require.Len(t, nms, c.NodeManagers(t), "one log per NodeManager process in %s/logs", c.Dir)
	}
	return append(clusterLogs{filepath.Join(c.Dir, "logs", "cluster.log")}, nms...)
}

// read returns every log's contents, one after the other.
func (l clusterLogs) read(t testing.TB) []byte {
	t.Helper()
	var all []byte
	for _, f := range l {
		b, err := os.ReadFile(f)
		require.NoError(t, err, "reading the cluster's logs")
		all = append(append(all, b...), '\n')
	}
	return all
}

func (l clusterLogs) String() string { return strings.Join(l, ", ") }

// nodeLocalDirs lists every NodeManager's local directory (yarn.nodemanager.local-dirs) of the
// cluster whose state directory is dir: data/nm-I/local on the default shape, below data/yarn on
// the one-JVM shape.
func nodeLocalDirs(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{
		filepath.Join(dir, "data", "nm-*", "local"),
		filepath.Join(dir, "data", "yarn", "*", "*", "*localDir*"),
	} {
		m, err := filepath.Glob(pattern)
		require.NoError(t, err)
		out = append(out, m...)
	}
	require.NotEmpty(t, out, "no NodeManager local directory below %s/data", dir)
	return out
}
