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

func TestFromFailure(t *testing.T) {
	tests := []struct {
		name, failure string
		status        int32
		want          string
	}{
		{"no failure line", "", 0, "exit code 0"},
		{"a program's exit", "worker:0 (container c on n:1) failed: exit code 3", 3, "exit code 3"},
		{
			"a launch the NodeManager refused: its reason follows",
			"worker:0 (container c on n:1) failed: exit code 40: container-executor: docker image r.example/x:1 is from registry r.example, which is not among the cluster's trusted registries (tfyarn.test)",
			40, "exit code 40: container-executor: docker image r.example/x:1 is from registry r.example, which is not among the cluster's trusted registries (tfyarn.test)",
		},
		{
			"YARN's kill with its figures",
			"worker:1 (container c on n:1) failed: killed for exceeding its physical memory limit; ask for more memory (exit status -104): Container [pid=1] is running beyond",
			-104, "killed for exceeding its physical memory limit; ask for more memory (exit status -104): Container [pid=1] is running beyond",
		},
		{"a line of another status says nothing of this one", "worker:0 (container c on n:1) failed: exit code 3: why", 4, "exit code 4"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, FromFailure(tt.failure, tt.status), tt.name)
	}
}
