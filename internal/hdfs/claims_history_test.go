package hdfs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClaimsHistoryPath: README "writes the final status report ... to HDFS
// at /user/<user>/.tfyarn/history/<app>.json, outside the staging directory
// it removes".
func TestClaimsHistoryPath(t *testing.T) {
	const app = "application_1_0001"
	p := HistoryPath("alice", app)
	require.Equal(t, "/user/alice/.tfyarn/history/application_1_0001.json", p)
	staging := StagingDir("alice", app)
	require.False(t, strings.HasPrefix(p, staging+"/"), "%s is inside the staging directory %s", p, staging)
}
