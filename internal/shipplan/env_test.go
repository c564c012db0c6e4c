package shipplan

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The variables tfyarn sets in every task are refused in the job's
// environment, and in its secret one; others pass (the framework's own are
// frameworks.CheckEnv's).
func TestTaskEnvRefusesWhatTfyarnSets(t *testing.T) {
	for _, name := range []string{"TFYARN_TASK", "TFYARN_TASK_PORT", "HADOOP_USER_NAME"} {
		require.EqualError(t, CheckTaskEnv(map[string]string{"A": "1", name: "x"}), name+" is set by tfyarn for each task; drop it from the environment")
		require.EqualError(t, CheckSecretEnv(nil, map[string]string{name: "x"}), "--secret-env "+name+" is set by tfyarn for each task; pick another name")
	}
	require.NoError(t, CheckTaskEnv(map[string]string{"TF_CPP_MIN_LOG_LEVEL": "2", "MASTER_PORT": "1"}))
}
