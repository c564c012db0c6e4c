package taskspec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitAfterDecider(t *testing.T) {
	c, w0, w1, ps, ev, tb := TaskID{Type: Chief}, TaskID{Type: Worker}, TaskID{Type: Worker, Index: 1},
		TaskID{Type: PS}, TaskID{Type: Evaluator}, TaskID{Type: TensorBoard}
	types := func(ids ...TaskID) []TaskType {
		out := make([]TaskType, len(ids))
		for i, id := range ids {
			out[i] = id.Type
		}
		return out
	}
	for _, tc := range []struct {
		name          string
		job, live     []TaskID
		stop, lingers []TaskID
	}{
		{"PSS: everything at once", []TaskID{c, w0, w1, ps, ev}, []TaskID{w0, w1, ps, ev}, []TaskID{w0, w1, ps, ev}, nil},
		{"MWMS: workers linger, side-cars stop", []TaskID{c, w0, w1, ev, tb}, []TaskID{w0, w1, ev, tb}, []TaskID{ev, tb}, []TaskID{w0, w1}},
		{"TF1: the ps lingers with worker:1", []TaskID{w0, w1, ps}, []TaskID{w1, ps}, nil, []TaskID{w1, ps}},
		{"TF1: the ps stops once the workers are gone", []TaskID{w0, w1, ps}, []TaskID{ps}, []TaskID{ps}, nil},
		{"workers only", []TaskID{w0, w1}, []TaskID{w1}, nil, []TaskID{w1}},
	} {
		stop, linger := SplitAfterDecider(types(tc.job...), tc.live)
		require.Equal(t, tc.stop, stop, tc.name)
		require.Equal(t, tc.lingers, linger, tc.name)
	}
}
