package appmaster

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/appmaster/core"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/taskspec"
)

// TestTaskProgramCarriesEachTasksServiceToken: with a side service, each
// task's sealed program carries its own token for it, which no other task
// gets, and the job's environment is left as it was; the launch context
// holds no token. A job's framework without a service gets no key.
func TestTaskProgramCarriesEachTasksServiceToken(t *testing.T) {
	jf := contract.JobFile{AppID: "application_1_0001", User: "alice", Job: taskspec.Job{Command: "py", Env: map[string]string{"A": "1"}}}
	key := []byte("the job service's key, 32 bytes!")
	program := TaskProgram(jf, map[string]string{"S": "2"}, key)
	tokens := map[string]bool{}
	for i := range 3 {
		w := taskspec.TaskID{Type: taskspec.Worker, Index: i}
		p, ok := program(w)
		require.True(t, ok)
		require.Equal(t, map[string]string{"A": "1", "S": "2", contract.EnvJobServiceToken: framework.JobServiceToken(key, w)}, p.Env)
		tokens[p.Env[contract.EnvJobServiceToken]] = true
		clc := TaskLaunchContext(jf, core.Launch{Task: w}, "am:1", nil)
		for _, kv := range clc.Environment {
			require.NotContains(t, kv.GetValue(), p.Env[contract.EnvJobServiceToken], kv.GetKey())
		}
	}
	require.Len(t, tokens, 3, "each task its own")
	require.Equal(t, map[string]string{"A": "1"}, jf.Job.Env)

	key, err := jobServiceKey(taskspec.Job{Framework: "xgboost"})
	require.NoError(t, err)
	require.Len(t, key, 32)
	again, err := jobServiceKey(taskspec.Job{Framework: "xgboost"})
	require.NoError(t, err)
	require.NotEqual(t, key, again, "each attempt its own")
	key, err = jobServiceKey(taskspec.Job{})
	require.NoError(t, err)
	require.Nil(t, key, "TensorFlow serves nothing")
}
