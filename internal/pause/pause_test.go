package pause

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestForWaits(t *testing.T) {
	start := time.Now()
	require.NoError(t, For(context.Background(), 20*time.Millisecond))
	require.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
}

func TestForEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	start := time.Now()
	require.ErrorIs(t, For(ctx, time.Hour), context.Canceled)
	require.Less(t, time.Since(start), time.Minute)
}
