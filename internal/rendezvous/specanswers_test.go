package rendezvous

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Every launcher woken by the spec's publication gets the one published spec, not a copy of
// its own: at 5,000 tasks the copies were part of what took the AM over its container's memory
// (bench/results/scale-sim.md). The elastic case, where the Board replaces it, is
// TestBoardElasticSpec.
func TestSpecCallersShareThePublishedSpec(t *testing.T) {
	b := newBoard(t, 0, group(taskspec.Worker, 2))
	ctx := context.Background()
	require.NoError(t, b.Register(ctx, reg(taskspec.Worker, 0, 1000)))
	require.NoError(t, b.Register(ctx, reg(taskspec.Worker, 1, 1001)))
	first, err := b.Spec(ctx, task(taskspec.Worker, 0))
	require.NoError(t, err)
	second, err := b.Spec(ctx, task(taskspec.Worker, 1))
	require.NoError(t, err)
	require.Equal(t, reflect.ValueOf(first).UnsafePointer(), reflect.ValueOf(second).UnsafePointer(), "each caller got a copy")
}

// At most specAnswerSlots spec answers are built at once; a long-poll whose caller gives up
// while it waits for a slot leaves without one.
func TestSpecAnswersWaitForASlot(t *testing.T) {
	s := specAnswerSlots()
	ctx := context.Background()
	for i := 0; i < cap(s); i++ {
		require.True(t, s.take(ctx))
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	require.False(t, s.take(short), "a slot beyond the bound")
	s.give()
	require.True(t, s.take(ctx), "the slot given back")
}
