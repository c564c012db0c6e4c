package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/taskspec"
)

func TestPolicyFor(t *testing.T) {
	workers, _ := taskspec.ParseSpec(taskspec.Worker, "3x1c")
	chief, _ := taskspec.ParseSpec(taskspec.Chief, "1c")
	plain := taskspec.Job{Tasks: []taskspec.TaskGroup{workers}, Command: "sh"}
	p, err := PolicyFor("", plain)
	require.NoError(t, err)
	require.Equal(t, AllSucceed{}, p, "a plain command job defaults to taskspec.SuccessAll")
	p, err = PolicyFor("", taskspec.Job{Tasks: []taskspec.TaskGroup{chief, workers}, Command: "sh"})
	require.NoError(t, err)
	require.Equal(t, ChiefPolicy{StopTimeout: taskspec.TFStopTimeout}, p, "a job with a chief defaults to taskspec.SuccessChief")
	p, err = PolicyFor(taskspec.SuccessChief, plain)
	require.NoError(t, err)
	require.Equal(t, ChiefPolicy{StopTimeout: taskspec.TFStopTimeout}, p)
	p, err = PolicyFor(taskspec.SuccessAll, taskspec.Job{Tasks: []taskspec.TaskGroup{workers}, Script: "train.py"})
	require.NoError(t, err)
	require.Equal(t, AllSucceed{}, p)
	require.Equal(t, ChiefPolicy{StopTimeout: taskspec.TFStopTimeout, WorkerGrace: time.Second}, WithWorkerGrace(p0(t, taskspec.SuccessChief, plain), time.Second))
	require.Equal(t, AllSucceed{}, WithWorkerGrace(AllSucceed{}, time.Second), "a policy without lingering workers is left as it is")
	_, err = PolicyFor("most", plain)
	require.EqualError(t, err, `appmaster: unknown success rule "most"; expected chief or all`)
}

func p0(t *testing.T, rule taskspec.SuccessRule, job taskspec.Job) Policy {
	p, err := PolicyFor(rule, job)
	require.NoError(t, err)
	return p
}
