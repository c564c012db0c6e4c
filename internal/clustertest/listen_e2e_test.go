//go:build e2e

package clustertest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestE2EAttackClusterListensOnlyOnLoopback: docs/security.md "the test cluster listens on
// loopback only". Every TCP port the running cluster's daemons listen on (NameNode RPC and HTTP,
// DataNode, ResourceManager, NodeManagers: the processes of the session its launcher started) is
// bound to a loopback address (127.0.0.1 or a NodeManager's 127.0.1.N), none to every interface,
// where any machine on the network could submit as any user.
func TestE2EAttackClusterListensOnlyOnLoopback(t *testing.T) {
	c := Require(t)
	b, err := os.ReadFile(filepath.Join(c.Dir, "cluster.pid"))
	require.NoError(t, err)
	sid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	pids := sessionPIDs(t, sid)
	require.NotEmpty(t, pids, "no process in the cluster's session %d", sid)
	ls := listenersOf(t, pids)
	// The RM's client port at least, and each NodeManager's three when they are processes of their own.
	require.GreaterOrEqual(t, len(ls), 7, "found only %v among the cluster's processes %v", ls, pids)
	require.Empty(t, offLoopback(ls), "the cluster listens beyond loopback, where other machines reach it")
}
