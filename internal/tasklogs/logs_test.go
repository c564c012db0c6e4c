package tasklogs

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/contract"
)

func TestTailLinesKeepsTheLastLines(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, tailLines(&b, strings.NewReader("a\nb\nc\nd\n"), 2))
	require.Equal(t, "c\nd\n", b.String())
	b.Reset()
	require.NoError(t, tailLines(&b, strings.NewReader("only\n"), 5))
	require.Equal(t, "only\n", b.String())
}

// launch_container.sh as a Hadoop 3.4.2 NodeManager writes it (the lines
// around TFYARN_TASK): the task is read from it, the AM's has none.
func TestTaskOfLaunchScript(t *testing.T) {
	script := "export JVM_PID=\"$$\"\nexport TFYARN_TASK_INDEX=\"1\"\nexport TFYARN_TASK_TYPE=\"worker\"\nexport TFYARN_TASK=\"worker:1\"\nexport MALLOC_ARENA_MAX=\"\"\n"
	require.Equal(t, "worker:1", taskOfLaunchScript([]byte(script)))
	require.Equal(t, "", taskOfLaunchScript([]byte("export CONTAINER_ID=\"container_1_0001_01_000001\"\n")))
}

func TestSelectTasks(t *testing.T) {
	st := &contract.StatusReport{Tasks: []contract.TaskReport{
		{Task: "chief:0", ContainerID: "c2", Node: "n:1"},
		{Task: "worker:0"},
	}}
	got, err := selectTasks(Request{AppID: "a", Task: "chief:0"}, st)
	require.NoError(t, err)
	require.Equal(t, []taskContainer{{task: "chief:0", container: "c2", node: "n:1"}}, got)
	_, err = selectTasks(Request{AppID: "a", Task: "worker:0"}, st)
	require.ErrorContains(t, err, "task worker:0 has no container yet")
	_, err = selectTasks(Request{AppID: "a", Task: "ps:0"}, st)
	require.ErrorContains(t, err, "it has no task ps:0 (its tasks: chief:0, worker:0)")
}
