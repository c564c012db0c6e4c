package submit

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
	"google.golang.org/protobuf/proto"
)

// Within the RM's cap as the client configuration states it, the AM's
// attempts pass (client's tests see the refusals through Submit).
func TestCheckAttemptsWithinTheRMsCap(t *testing.T) {
	c := hadoopconf.New(func(string) (string, bool) { return "", false })
	c.Set(amattempt.RMMaxAttemptsKey, "4")
	require.NoError(t, checkAttempts(Job{AMAttempts: 4, Conf: c}))
}

func TestSubmissionContext(t *testing.T) {
	job := Job{Job: taskspec.Job{Name: "n", NodeLabel: "gpu"}, User: "alice", Tags: []string{"t"}}.WithDefaults()
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

func TestSubmissionContextAttemptsAndLifetime(t *testing.T) {
	job := Job{Job: taskspec.Job{Name: "n"}, User: "alice", AMAttempts: 2, Timeout: 1500 * time.Millisecond}.WithDefaults()
	app := submissionContext(job, nil, "/user/alice/.tfyarn/application_1_0001", testResource("tfyarn"), testResource("job.json"))
	require.EqualValues(t, 2, app.GetMaxAppAttempts())
	// The next attempt adopts the tasks still running: YARN keeps them, the
	// AM is told to save its task table.
	require.True(t, app.GetKeepContainersAcrossApplicationAttempts())
	require.Contains(t, app.GetAmContainerSpec().GetEnvironment(), &hadoopyarn.StringStringMapProto{Key: proto.String(contract.EnvAMAttempts), Value: proto.String("2")})
	require.Len(t, app.GetApplicationTimeouts(), 1)
	require.Equal(t, hadoopyarn.ApplicationTimeoutTypeProto_APP_TIMEOUT_LIFETIME, app.GetApplicationTimeouts()[0].GetApplicationTimeoutType())
	require.EqualValues(t, 2, app.GetApplicationTimeouts()[0].GetTimeout(), "whole seconds, rounded up")

	job = Job{Job: taskspec.Job{Name: "n"}, User: "alice"}.WithDefaults()
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

// Issue 33 item 7: a --keytab job's ApplicationSubmissionContext, all the
// ResourceManager stores and the NodeManager keeps, holds the key to the
// sealed keytab, never the keytab: its bytes are nowhere in the context;
// the sealed keytab is a LocalResource of the AM's; and the key in the
// AM's credentials opens it.
func TestKeytabNotInSubmissionContext(t *testing.T) {
	kt := []byte("\x05\x02keytab of alice@EXAMPLE.COM: its secret key bytes 0123456789")
	p := t.TempDir() + "/alice.keytab"
	require.NoError(t, os.WriteFile(p, kt, 0o600))
	key, sealed, err := sealedKeytab(p, "application_1_0001")
	require.NoError(t, err)
	creds := security.NewCredentials()
	creds.AddSecret(contract.KeytabSecret, key)
	sealedRes := testResource(contract.SealedKeytabName)
	parts := secureParts{job: &contract.JobKerberos{KeytabSecret: contract.KeytabSecret}, tokens: creds.Marshal(), keytab: &sealedRes}
	job := Job{Job: taskspec.Job{Name: "n"}, User: "alice"}.WithDefaults()
	app := submissionContext(job, nil, "/user/alice/.tfyarn/application_1_0001", testResource("tfyarn"), testResource("job.json"))
	parts.apply(app.AmContainerSpec)

	wire, err := proto.Marshal(app)
	require.NoError(t, err)
	require.False(t, bytes.Contains(wire, kt), "the submission holds the keytab")
	require.False(t, bytes.Contains(wire, kt[10:30]), "the submission holds part of the keytab")
	require.False(t, bytes.Contains(wire, sealed), "the submission holds the sealed keytab")
	var local []string
	for _, r := range app.AmContainerSpec.LocalResources {
		local = append(local, r.GetKey()+" "+r.GetValue().GetResource().GetFile())
	}
	require.Contains(t, local, contract.SealedKeytabName+" /x/"+contract.SealedKeytabName)
	got, err := security.ReadCredentials(bytes.NewReader(app.AmContainerSpec.Tokens))
	require.NoError(t, err)
	k, ok := got.Secret(contract.KeytabSecret)
	require.True(t, ok)
	opened, err := security.OpenSealedKeytab(k, sealed, "application_1_0001")
	require.NoError(t, err)
	require.Equal(t, kt, opened)
}
