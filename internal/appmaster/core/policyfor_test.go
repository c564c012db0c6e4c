package core

import (
	"testing"

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
	require.Equal(t, TensorFlowPolicy{StopTimeout: taskspec.TFStopTimeout}, p, "a job with a chief defaults to taskspec.SuccessChief")
	p, err = PolicyFor(taskspec.SuccessChief, plain)
	require.NoError(t, err)
	require.Equal(t, TensorFlowPolicy{StopTimeout: taskspec.TFStopTimeout}, p)
	p, err = PolicyFor(taskspec.SuccessAll, taskspec.Job{Tasks: []taskspec.TaskGroup{workers}, Script: "train.py"})
	require.NoError(t, err)
	require.Equal(t, AllSucceed{}, p)
	_, err = PolicyFor("most", plain)
	require.EqualError(t, err, `appmaster: unknown success rule "most"; expected chief or all`)
}
