package success

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

func workerID(i int) taskspec.TaskID { return taskspec.TaskID{Type: taskspec.Worker, Index: i} }

func TestAllSucceedNamesFailuresInOrder(t *testing.T) {
	v := View{Tasks: []TaskStatus{
		{Task: workerID(0), State: TaskFailed, EndOrder: 2, Failure: "worker:0 second"},
		{Task: workerID(1), State: TaskRunning},
		{Task: workerID(2), State: TaskFailed, EndOrder: 1, Failure: "worker:2 first"},
	}}
	require.Equal(t, Verdict{Outcome: JobFailed, Diagnostics: "worker:2 first; worker:0 second"}, AllSucceed{}.Verdict(v))

	v = View{Tasks: []TaskStatus{{Task: workerID(0), State: TaskSucceeded}, {Task: workerID(1), State: TaskRunning}}}
	require.Equal(t, Verdict{}, AllSucceed{}.Verdict(v))
	require.Equal(t, []TaskStatus{v.Tasks[1]}, v.OfType(taskspec.Worker)[1:])
}

func elasticView(states ...TaskState) View {
	var v View
	for i, s := range states {
		t := TaskStatus{Task: taskspec.TaskID{Type: taskspec.Worker, Index: i}, State: s, EndOrder: uint64(i)}
		if s == TaskFailed {
			t.Failure = "worker:" + string(rune('0'+i)) + " failed: exit code 137"
		}
		v.Tasks = append(v.Tasks, t)
	}
	return v
}

func TestElasticPolicy(t *testing.T) {
	p := Elastic{Min: 2, MaxReplacements: 10}
	require.Equal(t, Verdict{}, p.Verdict(elasticView(TaskRunning, TaskRunning, TaskRunning)))
	require.Equal(t, Verdict{Replace: []taskspec.TaskID{{Type: taskspec.Worker, Index: 2}}}, p.Verdict(elasticView(TaskRunning, TaskRunning, TaskFailed)), "one lost, two go on, the lost one is replaced")
	require.Equal(t, Verdict{Outcome: JobSucceeded, Diagnostics: "2 of 3 workers succeeded; lost on the way: worker:2 failed: exit code 137"},
		p.Verdict(elasticView(TaskSucceeded, TaskSucceeded, TaskFailed)))
	require.Equal(t, Verdict{Outcome: JobFailed, Diagnostics: "1 of 3 workers left, fewer than --min-workers 2: worker:1 failed: exit code 137; worker:2 failed: exit code 137"},
		p.Verdict(elasticView(TaskRunning, TaskFailed, TaskFailed)))
	require.Equal(t, Verdict{Outcome: JobSucceeded, Diagnostics: "3 of 3 workers succeeded"}, p.Verdict(elasticView(TaskSucceeded, TaskSucceeded, TaskSucceeded)))
	require.Equal(t, Verdict{}, p.Verdict(elasticView(TaskSucceeded, TaskPending, TaskRunning)), "waits for every worker")

	// The replacements so far (View.Replaced, every AM attempt's) bound
	// the ones to come.
	lost2 := elasticView(TaskRunning, TaskRunning, TaskFailed, TaskFailed)
	lost2.Replaced = p.MaxReplacements - 1
	require.Equal(t, Verdict{Replace: []taskspec.TaskID{{Type: taskspec.Worker, Index: 2}}}, p.Verdict(lost2), "one replacement left")
	lost2.Replaced = p.MaxReplacements
	require.Equal(t, Verdict{}, p.Verdict(lost2), "none left: the others go on without them")

	// A worker whose program asked not to be restarted is not replaced.
	refused := elasticView(TaskRunning, TaskRunning, TaskFailed)
	refused.Tasks[2].NoRestart = true
	require.Equal(t, Verdict{}, p.Verdict(refused), "the others go on without it")
}
