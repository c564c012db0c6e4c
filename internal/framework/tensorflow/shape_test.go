package tensorflow

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

var (
	shapeChief = taskspec.TaskID{Type: taskspec.Chief}
	shapeW0    = taskspec.TaskID{Type: taskspec.Worker}
	shapeW1    = taskspec.TaskID{Type: taskspec.Worker, Index: 1}
	shapePS    = taskspec.TaskID{Type: taskspec.PS}
	shapeEval  = taskspec.TaskID{Type: taskspec.Evaluator}
	shapeTB    = taskspec.TaskID{Type: taskspec.TensorBoard}
)

func typesOf(ids ...taskspec.TaskID) []taskspec.TaskType {
	out := make([]taskspec.TaskType, len(ids))
	for i, id := range ids {
		out[i] = id.Type
	}
	return out
}

var splitCases = []struct {
	name          string
	job, live     []taskspec.TaskID
	stop, lingers []taskspec.TaskID
}{
	{"PSS: everything at once", []taskspec.TaskID{shapeChief, shapeW0, shapeW1, shapePS, shapeEval}, []taskspec.TaskID{shapeW0, shapeW1, shapePS, shapeEval}, []taskspec.TaskID{shapeW0, shapeW1, shapePS, shapeEval}, nil},
	{"MWMS: workers linger, side-cars stop", []taskspec.TaskID{shapeChief, shapeW0, shapeW1, shapeEval, shapeTB}, []taskspec.TaskID{shapeW0, shapeW1, shapeEval, shapeTB}, []taskspec.TaskID{shapeEval, shapeTB}, []taskspec.TaskID{shapeW0, shapeW1}},
	{"TF1: the ps lingers with worker:1", []taskspec.TaskID{shapeW0, shapeW1, shapePS}, []taskspec.TaskID{shapeW1, shapePS}, nil, []taskspec.TaskID{shapeW1, shapePS}},
	{"TF1: the ps stops once the workers are gone", []taskspec.TaskID{shapeW0, shapeW1, shapePS}, []taskspec.TaskID{shapePS}, []taskspec.TaskID{shapePS}, nil},
	{"workers only", []taskspec.TaskID{shapeW0, shapeW1}, []taskspec.TaskID{shapeW1}, nil, []taskspec.TaskID{shapeW1}},
}

func TestSplitAfterDecider(t *testing.T) {
	for _, tc := range splitCases {
		stop, linger := splitAfterDecider(typesOf(tc.job...), tc.live)
		require.Equal(t, tc.stop, stop, tc.name)
		require.Equal(t, tc.lingers, linger, tc.name)
	}
}

func group(typ taskspec.TaskType) taskspec.TaskGroup {
	return taskspec.TaskGroup{Type: typ, Instances: 1, Resources: taskspec.Resources{VCores: 1, MemoryMiB: 256}}
}

// shapeJobs are jobs of every shape the default rule tells apart, with
// the rule each gets.
var shapeJobs = []struct {
	name string
	job  taskspec.Job
	want taskspec.SuccessRule
}{
	{"generic command: every task must succeed", taskspec.Job{Tasks: []taskspec.TaskGroup{group(taskspec.Worker)}, Command: "sh"}, taskspec.SuccessAll},
	{"a script is a TensorFlow job", taskspec.Job{Tasks: []taskspec.TaskGroup{group(taskspec.Worker)}, Script: "train.py"}, taskspec.SuccessChief},
	{"with a chief", taskspec.Job{Tasks: []taskspec.TaskGroup{group(taskspec.Worker), group(taskspec.Chief)}, Command: "sh"}, taskspec.SuccessChief},
	{"with ps", taskspec.Job{Tasks: []taskspec.TaskGroup{group(taskspec.Worker), group(taskspec.PS)}, Command: "sh"}, taskspec.SuccessChief},
	{"with an evaluator", taskspec.Job{Tasks: []taskspec.TaskGroup{group(taskspec.Worker), group(taskspec.Evaluator)}, Command: "sh"}, taskspec.SuccessChief},
	{"tensorboard alone does not make a TensorFlow job", taskspec.Job{Tasks: []taskspec.TaskGroup{group(taskspec.Worker), group(taskspec.TensorBoard)}, Command: "sh"}, taskspec.SuccessAll},
}

func TestSuccessFollowsTheJobsShape(t *testing.T) {
	for _, tc := range shapeJobs {
		require.Equal(t, tc.want, New().Success(tc.job), tc.name)
	}
}

// taskspec keeps its own copies of these rules for the public Go API
// (taskspec.DefaultSuccessRule, SplitAfterDecider, ParameterServerShaped):
// they must say what the framework's say.
func TestTaskspecsCopiesAgree(t *testing.T) {
	for _, tc := range shapeJobs {
		require.Equal(t, New().Success(tc.job), taskspec.DefaultSuccessRule(tc.job), tc.name)
	}
	for _, tc := range splitCases {
		stop, linger := splitAfterDecider(typesOf(tc.job...), tc.live)
		pubStop, pubLinger := taskspec.SplitAfterDecider(typesOf(tc.job...), tc.live)
		require.Equal(t, stop, pubStop, tc.name)
		require.Equal(t, linger, pubLinger, tc.name)
		require.Equal(t, ParameterServerShaped(typesOf(tc.job...)), taskspec.ParameterServerShaped(typesOf(tc.job...)), tc.name)
	}
}
