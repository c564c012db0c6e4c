package client

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/appmaster"
)

func TestTaskChangesInTheOrderTheyHappen(t *testing.T) {
	zero := int32(0)
	prev := &appmaster.StatusReport{Tasks: []TaskResult{{Task: "chief:0"}, {Task: "worker:0"}}}
	cur := &appmaster.StatusReport{Tasks: []TaskResult{
		{Task: "chief:0", ContainerID: "c2", Host: "h", Port: 1, ExitCode: &zero},
		{Task: "worker:0", ContainerID: "c3"},
	}}
	var got []string
	for _, ev := range taskChanges(prev, cur) {
		got = append(got, ev.Task.Task+" "+ev.TaskChange)
	}
	require.Equal(t, []string{"chief:0 launched", "worker:0 launched", "chief:0 registered", "chief:0 ended"}, got)
	require.Empty(t, taskChanges(cur, cur))
}
