package client

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/follow"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/yarn"
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

// Kill names the application when the ResourceManager cannot be asked.
func TestKillSaysWhichApplication(t *testing.T) {
	c, err := Connect(Connection{conf: deadConf(), CallTimeout: time.Second})
	require.NoError(t, err)
	defer c.Close()
	rm, err := c.session.RM()
	require.NoError(t, err)
	id, err := yarn.ParseApplicationID("application_1_0001")
	require.NoError(t, err)
	s := &Submission{AppID: "application_1_0001", follow: follow.New(follow.App{AppID: "application_1_0001", ID: id, RM: rm}, follow.Options{CallTimeout: time.Second})}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	res, err := s.Kill(ctx, "test")
	require.ErrorContains(t, err, "client: killing application_1_0001: ")
	require.Equal(t, "application_1_0001", res.AppID)
}
