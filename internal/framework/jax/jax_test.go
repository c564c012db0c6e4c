package jax

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The hook registers a cluster environment reading tfyarn's variables,
// only when they are set, and hands over to the environment's own
// sitecustomize (the real JAX runs it in TestE2EJAX).
func TestJAXHook(t *testing.T) {
	for _, want := range []string{`"jax._src.clusters"`, "clusters.ClusterEnv", `os.environ["JAX_NUM_PROCESSES"]`,
		`os.environ["JAX_PROCESS_ID"]`, `if "JAX_NUM_PROCESSES" in os.environ:`, "import sitecustomize"} {
		require.Contains(t, Hook, want)
	}
}
