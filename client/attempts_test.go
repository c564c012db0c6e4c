package client

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Asking for more ApplicationMaster attempts than the RM allows, or for a
// negative lifetime, is refused before the cluster is contacted.
func TestSubmitRefusesAttemptsOverTheRMsCap(t *testing.T) {
	worker, err := taskspec.ParseSpec(taskspec.Worker, "1c")
	require.NoError(t, err)
	for _, tc := range []struct {
		cap  string // yarn.resourcemanager.am.max-attempts; "" for Hadoop's default
		job  Job
		want string
	}{
		{"", Job{AMAttempts: 3}, "--am-attempts 3: the ResourceManager allows at most 2 (yarn.resourcemanager.am.max-attempts); ask for 2 or fewer"},
		{"4", Job{AMAttempts: 5}, "--am-attempts 5: the ResourceManager allows at most 4"},
		{"", Job{AMAttempts: -1}, "--am-attempts -1: give at least 1"},
		{"", Job{Timeout: -time.Second}, "--timeout -1s: give a positive duration"},
		{"two", Job{AMAttempts: 2}, "--am-attempts: "},
	} {
		tc.job.Job = taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Command: "true"}
		conf := deadConf()
		if tc.cap != "" {
			conf.Set(amattempt.RMMaxAttemptsKey, tc.cap)
		}
		_, err := submitTo(context.Background(), conf, tc.job)
		var verr *taskspec.ValidationError
		require.ErrorAs(t, err, &verr, tc.want)
		require.ErrorContains(t, err, tc.want)
	}
}
