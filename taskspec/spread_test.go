package taskspec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSpread(t *testing.T) {
	j := Job{Command: "true", Tasks: []TaskGroup{
		{Type: Chief, Instances: 1, Resources: Resources{VCores: 1, MemoryMiB: 1}},
		{Type: Worker, Instances: 2, Resources: Resources{VCores: 1, MemoryMiB: 1}},
		{Type: Evaluator, Instances: 1, Resources: Resources{VCores: 1, MemoryMiB: 1}},
	}}
	j.Spread = SpreadAll
	require.NoError(t, j.Validate(ClusterLimits{}))
	require.True(t, j.Spreads(Chief) && j.Spreads(Worker) && !j.Spreads(Evaluator))
	require.Equal(t, 3, j.SpreadCount())
	require.Equal(t, "tfyarn-cluster", j.SpreadTag())

	j.Spread = "worker"
	require.NoError(t, j.Validate(ClusterLimits{}))
	require.True(t, !j.Spreads(Chief) && j.Spreads(Worker))
	require.Equal(t, 2, j.SpreadCount())
	require.Equal(t, "tfyarn-worker", j.SpreadTag())

	j.Spread = "ps"
	require.EqualError(t, j.Validate(ClusterLimits{}), "--spread ps: the job has no ps tasks; give a type the job has, or all")
	j.Spread = "nodes"
	require.ErrorContains(t, j.Validate(ClusterLimits{}), `--spread "nodes": give a task type (`)
	j.Spread = ""
	require.False(t, j.Spreads(Worker))
	require.Empty(t, j.SpreadTag())
}

func TestAffinities(t *testing.T) {
	j := Job{Command: "true", Tasks: []TaskGroup{
		{Type: Worker, Instances: 2, Resources: Resources{VCores: 1, MemoryMiB: 1}},
		{Type: PS, Instances: 1, Resources: Resources{VCores: 1, MemoryMiB: 1}},
		{Type: Evaluator, Instances: 1, Resources: Resources{VCores: 1, MemoryMiB: 1}},
	}}
	as, err := ParseAffinities("ps=worker, Evaluator=worker,ps=worker", false)
	require.NoError(t, err)
	require.Equal(t, Affinities{{Type: PS, Other: Worker}, {Type: Evaluator, Other: Worker}}, as, "repeats count once")
	j.Affinities = as
	require.NoError(t, j.Validate(ClusterLimits{}))
	a, ok := j.AffinityOf(PS)
	require.True(t, ok)
	require.Equal(t, "each ps task on a node running a worker task (--colocate ps=worker)", a.Text())
	require.True(t, j.AffinityTarget(Worker) && !j.AffinityTarget(PS))
	require.Equal(t, "tfyarn-worker", AffinityTag(Worker))
	require.Equal(t, "each ps task on a node running a worker task (--colocate ps=worker); each evaluator task on a node running a worker task (--colocate evaluator=worker)", j.AffinityText())

	for s, want := range map[string]string{
		"ps":        `--apart "ps": expected TYPE=TYPE pairs, e.g. ps=worker`,
		"ps=":       `--apart "ps=": expected TYPE=TYPE pairs, e.g. ps=worker`,
		"ps=master": `--apart "ps=master": unknown task type "master"`,
	} {
		_, err := ParseAffinities(s, true)
		require.ErrorContains(t, err, want)
	}
	_, err = ParseAffinities(strings.Repeat("ps=worker,", 60), true)
	require.ErrorContains(t, err, "--apart is 600 bytes long; give at most 512")

	for pairs, want := range map[string]string{
		"ps=ps":                          "--colocate ps=ps: a type cannot be placed next to itself; drop the pair (--spread ps keeps them apart)",
		"!ps=ps":                         "--apart ps=ps: to keep ps tasks on nodes of their own, use --spread ps",
		"chief=worker":                   "--colocate chief=worker: the job has no chief task; add --chief or drop the pair",
		"!worker=chief":                  "--apart worker=chief: the job has no chief task; add --chief or drop the pair",
		"ps=worker !ps=worker":           "--colocate ps=worker and --apart ps=worker contradict each other; keep one",
		"ps=worker ps=evaluator":         "--colocate ps=worker and --colocate ps=evaluator both place ps tasks; YARN places a request under one constraint, keep one",
		"spread:worker !worker=ps":       "--apart worker=ps and --spread worker both place worker tasks; YARN places a request under one constraint, keep one",
		"spread:all ps=worker":           "--colocate ps=worker and --spread all both place ps tasks; YARN places a request under one constraint, keep one",
		"spread:worker evaluator=worker": "",
	} {
		j := j
		j.Affinities = nil
		for _, f := range strings.Fields(pairs) {
			if s, ok := strings.CutPrefix(f, "spread:"); ok {
				j.Spread = s
				continue
			}
			s, apart := strings.CutPrefix(f, "!")
			a, b, _ := strings.Cut(s, "=")
			j.Affinities = append(j.Affinities, Affinity{Type: TaskType(a), Other: TaskType(b), Apart: apart})
		}
		if want == "" {
			require.NoError(t, j.Validate(ClusterLimits{}), pairs)
			continue
		}
		require.EqualError(t, j.Validate(ClusterLimits{}), want, pairs)
	}
}

func FuzzParseAffinities(f *testing.F) {
	for _, s := range []string{"ps=worker", "ps=worker,evaluator=chief", "=", ",,", "ps=worker=chief", "ps=ps"} {
		f.Add(s, false)
	}
	job := Job{Command: "true", Spread: "worker", Tasks: []TaskGroup{
		{Type: Chief, Instances: 1, Resources: Resources{VCores: 1, MemoryMiB: 1}},
		{Type: Worker, Instances: 2, Resources: Resources{VCores: 1, MemoryMiB: 1}},
		{Type: PS, Instances: 1, Resources: Resources{VCores: 1, MemoryMiB: 1}},
	}}
	f.Fuzz(func(t *testing.T, s string, apart bool) {
		as, err := ParseAffinities(s, apart)
		if err != nil {
			return
		}
		// What parses names known types, one pair at most once, each of
		// the flag it came from; validating it ends.
		require.NotEmpty(t, as)
		for i, a := range as {
			require.True(t, a.Type.Known() && a.Other.Known(), "%+v", a)
			require.Equal(t, apart, a.Apart)
			require.NotContains(t, as[i+1:], a)
		}
		j := job
		j.Affinities = as
		_ = j.Validate(ClusterLimits{})
	})
}
