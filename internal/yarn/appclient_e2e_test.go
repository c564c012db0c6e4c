//go:build e2e

package yarn_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// TestE2EHAFailover: rm1 is a dead port, rm2 the real RM; calls must fail
// over to rm2 and stay there.
func TestE2EHAFailover(t *testing.T) {
	c := clustertest.Require(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	require.NoError(t, l.Close())

	dir := t.TempDir()
	for _, f := range []string{"core-site.xml", "hdfs-site.xml", "yarn-site.xml"} {
		b, err := os.ReadFile(filepath.Join(c.ConfDir, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	conf, err := hadoopconf.LoadDir(dir)
	require.NoError(t, err)
	conf.Set("yarn.resourcemanager.ha.enabled", "true")
	conf.Set("yarn.resourcemanager.ha.rm-ids", "rm1,rm2")
	conf.Set("yarn.resourcemanager.address.rm1", dead)
	conf.Set("yarn.resourcemanager.address.rm2", c.Facts["rm"])

	rm, err := yarn.NewApplicationClient(conf, yarn.ClientOptions{})
	require.NoError(t, err)
	defer rm.Close()
	require.Equal(t, []string{dead, c.Facts["rm"]}, rm.Addrs())

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	start := time.Now()
	m, err := rm.GetClusterMetrics(ctx)
	require.NoError(t, err)
	require.EqualValues(t, c.NodeManagers(t), m.GetNumNodeManagers())
	t.Logf("failover from %s to %s took %s", dead, c.Facts["rm"], time.Since(start).Round(time.Millisecond))

	nodes, err := rm.GetClusterNodes(ctx)
	require.NoError(t, err)
	require.Len(t, nodes, c.NodeManagers(t))
}

// TestE2EHAFailoverFromFiles is the same with the HA keys in yarn-site.xml,
// the way users configure it.
func TestE2EHAFailoverFromFiles(t *testing.T) {
	c := clustertest.Require(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadPort := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())

	dir := t.TempDir()
	site := `<configuration>
<property><name>yarn.resourcemanager.ha.enabled</name><value>true</value></property>
<property><name>yarn.resourcemanager.ha.rm-ids</name><value>rm1,rm2</value></property>
<property><name>yarn.resourcemanager.hostname.rm1</name><value>127.0.0.1</value></property>
<property><name>yarn.resourcemanager.address.rm1</name><value>${yarn.resourcemanager.hostname.rm1}:` + strconv.Itoa(deadPort) + `</value></property>
<property><name>yarn.resourcemanager.address.rm2</name><value>` + c.Facts["rm"] + `</value></property>
</configuration>`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte(site), 0o644))
	conf, err := hadoopconf.LoadDir(dir)
	require.NoError(t, err)
	rm, err := yarn.NewApplicationClient(conf, yarn.ClientOptions{})
	require.NoError(t, err)
	defer rm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	m, err := rm.GetClusterMetrics(ctx)
	require.NoError(t, err)
	require.EqualValues(t, c.NodeManagers(t), m.GetNumNodeManagers())
}
