package envpack

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClaimsPackCacheLocation: README "a small local cache
// ($XDG_CACHE_HOME/tfyarn/packs, ~/.cache/tfyarn/packs)".
func TestClaimsPackCacheLocation(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	c, err := DefaultPackCache()
	require.NoError(t, err)
	require.Equal(t, "/xdg/tfyarn/packs", c.Dir)

	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/alice")
	c, err = DefaultPackCache()
	require.NoError(t, err)
	require.Equal(t, "/home/alice/.cache/tfyarn/packs", c.Dir)
}
