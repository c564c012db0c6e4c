package client

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/taskspec"
)

// deadConf names an RM and a NameNode nobody listens on: whatever Submit
// rejects here, it rejected before touching the cluster.
func deadConf() *hadoopconf.Config {
	c := hadoopconf.New(func(string) (string, bool) { return "", false })
	c.Set("yarn.resourcemanager.address", "127.0.0.1:1")
	c.Set("fs.defaultFS", "hdfs://127.0.0.1:1")
	return c
}

// submitTo submits job as Client.Submit does, to the cluster conf names.
func submitTo(ctx context.Context, conf *hadoopconf.Config, job Job) (*Submission, error) {
	c, err := Connect(Connection{conf: conf})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Submit(ctx, job, Callbacks{})
}

func TestSubmitRejectsBeforeContactingTheCluster(t *testing.T) {
	worker, err := taskspec.ParseSpec(taskspec.Worker, "1c")
	require.NoError(t, err)
	ps, err := taskspec.ParseSpec(taskspec.PS, "1c")
	require.NoError(t, err)
	for _, tc := range []struct {
		job  Job
		want string
	}{
		{Job{Job: taskspec.Job{Command: "true"}}, "the job has no tasks"},
		{Job{Job: taskspec.Job{Tasks: []taskspec.TaskGroup{ps}, Command: "true"}}, "no chief and no worker"},
		{Job{Job: taskspec.Job{Tasks: []taskspec.TaskGroup{worker}}}, "nothing to run"},
		{Job{Job: taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Script: "no-such-train.py"}}, "script no-such-train.py: no such file or directory"},
		{Job{Job: taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Script: "."}}, "script . is not a regular file"},
		{Job{Job: taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Command: "true"}, Success: "most"}, `unknown success rule "most"; expected chief or all`},
		{Job{Job: taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Command: "true", Queue: "a b"}}, `queue "a b" has spaces`},
		{Job{Job: taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Command: "true"}, Binary: "/nonexistent/tfyarn"}, "is not a regular file"},
	} {
		_, err := submitTo(context.Background(), deadConf(), tc.job)
		require.ErrorContains(t, err, tc.want)
	}
}

func TestSubmissionContext(t *testing.T) {
	job := Job{Job: taskspec.Job{Name: "n", NodeLabel: "gpu"}, user: "alice", Tags: []string{"t"}}.withDefaults()
	app := submissionContext(job, nil, "/user/alice/.tfyarn/application_1_0001", testResource("tfyarn"), testResource("job.json"))
	require.Equal(t, "default", app.GetQueue())
	require.Equal(t, taskspec.DefaultAppType, app.GetApplicationType())
	require.EqualValues(t, 1, app.GetMaxAppAttempts())
	require.False(t, app.GetKeepContainersAcrossApplicationAttempts())
	// The job-wide label is the tasks' (issue 10, case 2): the AM's
	// container gets only --am-node-label.
	require.Empty(t, app.GetNodeLabelExpression())
	require.Nil(t, app.NodeLabelExpression)
	require.Nil(t, app.Priority, "no Priority leaves the queue's default")
	job.AMNodeLabel = "am"
	job.Priority = 7
	app = submissionContext(job, nil, "/user/alice/.tfyarn/application_1_0001", testResource("tfyarn"), testResource("job.json"))
	require.Equal(t, "am", app.GetNodeLabelExpression())
	require.EqualValues(t, 7, app.GetPriority().GetPriority())
	require.EqualValues(t, DefaultAMMemoryMiB, app.GetResource().GetMemory())
	env := map[string]string{}
	for _, kv := range app.GetAmContainerSpec().GetEnvironment() {
		env[kv.GetKey()] = kv.GetValue()
	}
	require.Equal(t, "192MiB", env[envGoMemLimit], "the AM's heap is bounded at 3/4 of its container")
	require.Equal(t, []string{"./tfyarn am --job job.json 1><LOG_DIR>/am.stdout 2><LOG_DIR>/am.stderr"}, app.GetAmContainerSpec().GetCommand())
	var keys []string
	for _, r := range app.GetAmContainerSpec().GetLocalResources() {
		keys = append(keys, r.GetKey())
	}
	require.Equal(t, []string{"tfyarn", "job.json"}, keys)
}

func testResource(name string) hdfs.Resource {
	return hdfs.Resource{Scheme: "hdfs", Host: "nn", Port: 8020, Path: "/x/" + name, Size: 1, Timestamp: 1}
}
