package core

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

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
	p := ElasticPolicy{Min: 2}
	require.Equal(t, Verdict{}, p.Verdict(elasticView(TaskRunning, TaskRunning, TaskRunning)))
	require.Equal(t, Verdict{}, p.Verdict(elasticView(TaskRunning, TaskRunning, TaskFailed)), "one lost, two go on")
	require.Equal(t, Verdict{Outcome: JobSucceeded, Diagnostics: "2 of 3 workers succeeded; lost on the way: worker:2 failed: exit code 137"},
		p.Verdict(elasticView(TaskSucceeded, TaskSucceeded, TaskFailed)))
	require.Equal(t, Verdict{Outcome: JobFailed, Diagnostics: "1 of 3 workers left, fewer than --min-workers 2: worker:1 failed: exit code 137; worker:2 failed: exit code 137"},
		p.Verdict(elasticView(TaskRunning, TaskFailed, TaskFailed)))
	require.Equal(t, Verdict{Outcome: JobSucceeded, Diagnostics: "3 of 3 workers succeeded"}, p.Verdict(elasticView(TaskSucceeded, TaskSucceeded, TaskSucceeded)))
	require.Equal(t, Verdict{}, p.Verdict(elasticView(TaskSucceeded, TaskPending, TaskRunning)), "waits for every worker")
}

func TestPolicyForElastic(t *testing.T) {
	job := taskspec.Job{Framework: "pytorch", MinWorkers: 2, Script: "t.py", Tasks: []taskspec.TaskGroup{{Type: taskspec.Worker, Instances: 3}}}
	p, err := PolicyFor("", job)
	require.NoError(t, err)
	require.Equal(t, ElasticPolicy{Min: 2}, p)
	job.MinWorkers = 0
	p, err = PolicyFor("", job)
	require.NoError(t, err)
	require.Equal(t, AllSucceed{}, p)
}
