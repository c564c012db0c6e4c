//go:build e2e

package clustertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPrivacyClusterRunsBesideThePlainOne: the second cluster comes up on its own ports with
// hadoop.rpc.protection=privacy, and Hadoop's own client talks to it (over SASL-wrapped RPC
// where tokens are used) while the main cluster keeps running.
func TestPrivacyClusterRunsBesideThePlainOne(t *testing.T) {
	main := Require(t)
	priv := RequirePrivacy(t)
	require.NotEqual(t, main.ConfDir, priv.ConfDir)
	require.Equal(t, "privacy", priv.Profile)
	require.Equal(t, "localhost:18032", priv.Facts["rm"])

	core, err := os.ReadFile(filepath.Join(priv.ConfDir, "core-site.xml"))
	require.NoError(t, err)
	require.Contains(t, string(core), "<name>hadoop.rpc.protection</name><value>privacy</value>")

	nodes := priv.Hadoop(t, "yarn", "node", "-list", "-showDetails")
	require.Equal(t, priv.NodeManagers(t), strings.Count(nodes, "RUNNING"), nodes)
	require.Contains(t, nodes, "Node-Labels : gpu")
	require.Contains(t, nodes, "yarn.io/gpu: 2")
}
