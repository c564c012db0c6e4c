package client

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
	"google.golang.org/protobuf/proto"
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
	// Within the cap the check passes (and Submit goes on to the dead RM).
	c := deadConf()
	c.Set(amattempt.RMMaxAttemptsKey, "4")
	require.NoError(t, checkAttempts(Job{AMAttempts: 4, conf: c}))
}

func TestSubmissionContextAttemptsAndLifetime(t *testing.T) {
	job := Job{Job: taskspec.Job{Name: "n"}, user: "alice", AMAttempts: 2, Timeout: 1500 * time.Millisecond}.withDefaults()
	app := submissionContext(job, nil, "/user/alice/.tfyarn/application_1_0001", testResource("tfyarn"), testResource("job.json"))
	require.EqualValues(t, 2, app.GetMaxAppAttempts())
	// The next attempt adopts the tasks still running: YARN keeps them, the
	// AM is told to save its task table.
	require.True(t, app.GetKeepContainersAcrossApplicationAttempts())
	require.Contains(t, app.GetAmContainerSpec().GetEnvironment(), &hadoopyarn.StringStringMapProto{Key: proto.String(contract.EnvAMAttempts), Value: proto.String("2")})
	require.Len(t, app.GetApplicationTimeouts(), 1)
	require.Equal(t, hadoopyarn.ApplicationTimeoutTypeProto_APP_TIMEOUT_LIFETIME, app.GetApplicationTimeouts()[0].GetApplicationTimeoutType())
	require.EqualValues(t, 2, app.GetApplicationTimeouts()[0].GetTimeout(), "whole seconds, rounded up")

	job = Job{Job: taskspec.Job{Name: "n"}, user: "alice"}.withDefaults()
	app = submissionContext(job, nil, "/user/alice/.tfyarn/application_1_0001", testResource("tfyarn"), testResource("job.json"))
	require.EqualValues(t, 1, app.GetMaxAppAttempts())
	require.False(t, app.GetKeepContainersAcrossApplicationAttempts())
	require.Empty(t, app.GetApplicationTimeouts())
}

// With several AM attempts the secret the launchers sign with travels in
// the application's credentials, beside what was there: every attempt
// reads the same one.
func TestShareRendezvousSecret(t *testing.T) {
	clc := &hadoopyarn.ContainerLaunchContextProto{}
	require.NoError(t, shareRendezvousSecret(clc, 1))
	require.Empty(t, clc.GetTokens(), "one attempt: each AM makes its own")

	creds := security.NewCredentials()
	creds.AddToken("hdfs", security.Token{Kind: security.KindHDFSDelegation, Service: "nn:8020"})
	clc.Tokens = creds.Marshal()
	require.NoError(t, shareRendezvousSecret(clc, 2))
	got, err := security.ParseCredentials(clc.GetTokens())
	require.NoError(t, err)
	_, ok := got.Token("hdfs")
	require.True(t, ok, "the tokens stay")
	secret, err := rendezvous.SecretFrom(got)
	require.NoError(t, err)
	require.Len(t, secret, rendezvous.SecretSize)
}
