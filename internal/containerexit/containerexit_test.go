package containerexit

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDescribe(t *testing.T) {
	tests := []struct {
		status int32
		want   string
	}{
		{0, "exit code 0"},
		{3, "exit code 3"},
		{137, "exit code 137 (SIGKILL)"},
		{143, "exit code 143 (SIGTERM)"},
		{-100, "aborted by YARN: the container was released or its node was lost (exit status -100)"},
		{-101, "failed because the node's local or log disks went bad (exit status -101)"},
		{-102, "preempted by the scheduler (exit status -102)"},
		{-103, "killed for exceeding its virtual memory limit (exit status -103)"},
		{-104, "killed for exceeding its physical memory limit; ask for more memory (exit status -104)"},
		{-105, "killed by the ApplicationMaster (exit status -105)"},
		{-106, "killed by the ResourceManager (exit status -106)"},
		{-107, "killed because the application finished (exit status -107)"},
		{-108, "killed by the NodeManager to make room for another container (exit status -108)"},
		{-1000, "exit status unknown to YARN (exit status -1000)"},
		{-7, "exit status -7"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, Describe(tt.status))
	}
}
