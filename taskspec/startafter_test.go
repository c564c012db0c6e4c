package taskspec

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseStartAfter(t *testing.T) {
	o, err := ParseStartAfter("worker=ps")
	require.NoError(t, err)
	require.Equal(t, StartOrder{Worker: {PS}}, o)
	o, err = ParseStartAfter(" Evaluator = chief ,worker=ps,worker=chief,worker=ps")
	require.NoError(t, err)
	require.Equal(t, StartOrder{Evaluator: {Chief}, Worker: {Chief, PS}}, o, "repeated pairs once, waits in job order")
	require.Equal(t, "worker=chief,worker=ps,evaluator=chief", o.String())
	for in, want := range map[string]string{
		"":              `--start-after "": expected TYPE=TYPE pairs, e.g. worker=ps (workers start after every ps)`,
		"worker":        `--start-after "worker": expected TYPE=TYPE pairs, e.g. worker=ps (workers start after every ps)`,
		"worker=":       `--start-after "worker=": expected TYPE=TYPE pairs, e.g. worker=ps (workers start after every ps)`,
		"worker=ps,":    `--start-after "": expected TYPE=TYPE pairs, e.g. worker=ps (workers start after every ps)`,
		"worker=master": `--start-after "worker=master": unknown task type "master"; expected one of chief, worker, ps, evaluator, tensorboard`,
		"gpu=ps":        `--start-after "gpu=ps": unknown task type "gpu"; expected one of chief, worker, ps, evaluator, tensorboard`,
		"worker=ps=ps":  `--start-after "worker=ps=ps": unknown task type "ps=ps"; expected one of chief, worker, ps, evaluator, tensorboard`,
	} {
		_, err := ParseStartAfter(in)
		require.EqualError(t, err, want, "%q", in)
	}
}

// The order's checks against the job: each refusal one line naming the
// pair and what to do.
func TestValidateStartAfter(t *testing.T) {
	job := tfJob(group(Chief, 1, 1, 1024, 0), group(Worker, 2, 1, 1024, 0), group(PS, 2, 1, 1024, 0))
	for _, tc := range []struct {
		order    string
		wantType TaskType
		want     string
	}{
		{"worker=ps", "", ""},
		{"worker=ps,chief=ps", "", ""},
		{"worker=chief,chief=ps", "", ""},
		{"ps=ps", PS, "--start-after ps=ps: a type cannot wait for itself"},
		{"evaluator=chief", Evaluator, "--start-after evaluator=chief: the job has no evaluator task; add --evaluator or drop the pair"},
		{"worker=evaluator", Evaluator, "--start-after worker=evaluator: the job has no evaluator task to wait for; add --evaluator or drop the pair"},
		{"worker=ps,ps=worker", Worker, "--start-after: worker → ps → worker wait for one another, so none would start; drop one of these pairs"},
		{"chief=worker,worker=ps,ps=chief", Chief, "--start-after: chief → worker → ps → chief wait for one another, so none would start; drop one of these pairs"},
	} {
		o, err := ParseStartAfter(tc.order)
		require.NoError(t, err)
		j := job
		j.StartAfter = o
		err = j.Validate(ClusterLimits{})
		if tc.want == "" {
			require.NoError(t, err, tc.order)
			continue
		}
		var ve *ValidationError
		require.ErrorAs(t, err, &ve, tc.order)
		require.Equal(t, tc.want, ve.Message, tc.order)
		require.Equal(t, tc.wantType, ve.TaskType, tc.order)
	}
}

func FuzzParseStartAfter(f *testing.F) {
	for _, s := range []string{"worker=ps", "evaluator=chief,worker=ps", "=", ",,", "worker=ps=ps"} {
		f.Add(s)
	}
	job := tfJob(group(Chief, 1, 1, 1024, 0), group(Worker, 2, 1, 1024, 0), group(PS, 1, 1, 1024, 0), group(Evaluator, 1, 1, 1024, 0))
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseStartAfter(s)
		if err != nil {
			return
		}
		// What parses renders back to an equal order, and validating it ends.
		again, err := ParseStartAfter(o.String())
		require.NoError(t, err)
		require.Equal(t, o, again)
		j := job
		j.StartAfter = o
		_ = j.Validate(ClusterLimits{})
	})
}
