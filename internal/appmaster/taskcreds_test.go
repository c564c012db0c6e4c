package appmaster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/taskspec"
)

func TestPublishCredentials(t *testing.T) {
	worker, _ := taskspec.ParseSpec(taskspec.Worker, "1c")
	job := taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Command: "true"}
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	var mu sync.Mutex
	var logs []string
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, fmt.Sprintf(format, args...))
	}
	rv, err := StartRendezvous(RendezvousConfig{AppID: "application_1_0001", Job: job, Secret: secret, Host: "127.0.0.1", Listen: "127.0.0.1:0", Logf: logf, FreshCredentials: true})
	require.NoError(t, err)
	defer rv.Close(0)
	require.Zero(t, rv.PublishedCredentials().Version)

	am := security.NewCredentials()
	am.AddToken("amrm", security.Token{Identifier: []byte("amrm-id"), Password: []byte("amrm-password"), Kind: security.KindAMRMToken, Service: "rm:8030"})
	am.AddToken("hdfs", security.Token{Identifier: []byte("hdfs-id-1"), Password: []byte("hdfs-password-1"), Kind: security.KindHDFSDelegation, Service: "ha-hdfs:nn1"})
	am.AddSecret("user.key", []byte("user secret"))
	rendezvous.AddSecret(am, secret) // even if the AM's own credentials carried it
	rv.PublishCredentials(am)
	require.Equal(t, 2, am.NumTokens(), "the caller's credentials are not modified")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rv.Assign(worker0, "container_1_0001_01_000002")
	c := launcherClient(t, rv, secret, "container_1_0001_01_000002")
	u, got, err := c.WaitCredentials(ctx, worker0, 0)
	require.NoError(t, err)
	require.Equal(t, uint64(1), u.Version)
	require.Len(t, got.Tokens(), 1)
	tok, ok := got.Token("hdfs")
	require.True(t, ok)
	require.Equal(t, "hdfs-password-1", string(tok.Password))
	require.Empty(t, got.TokensOfKind(security.KindAMRMToken), "never the AMRMToken")
	_, ok = got.Secret(rendezvous.SecretAlias)
	require.False(t, ok, "never the rendezvous secret")
	_, ok = got.Secret("user.key")
	require.True(t, ok, "the user's own secrets go to the tasks as they did at launch")

	rv.PublishCredentials(am)
	require.Equal(t, uint64(1), rv.PublishedCredentials().Version, "unchanged credentials keep their version")
	am.AddToken("hdfs", security.Token{Identifier: []byte("hdfs-id-2"), Password: []byte("hdfs-password-2"), Kind: security.KindHDFSDelegation, Service: "ha-hdfs:nn1"})
	rv.PublishCredentials(am)
	u, got, err = c.WaitCredentials(ctx, worker0, 1)
	require.NoError(t, err)
	require.Equal(t, uint64(2), u.Version)
	tok, _ = got.Token("hdfs")
	require.Equal(t, "hdfs-id-2", string(tok.Identifier))

	mu.Lock()
	all := strings.Join(logs, "\n")
	mu.Unlock()
	require.Contains(t, all, "version 2")
	require.Contains(t, all, "ha-hdfs:nn1")
	for _, s := range []string{"hdfs-password", "amrm-password", "user secret", string(secret)} {
		require.NotContains(t, all, s)
	}
}

// An AM that never gets fresh credentials (no keytab) tells a launcher so
// at once: it stops asking, instead of holding a long-poll open for them
// all its life (a third of the AM's connections per running task).
func TestNoFreshCredentialsNoLongPoll(t *testing.T) {
	worker, _ := taskspec.ParseSpec(taskspec.Worker, "1c")
	job := taskspec.Job{Tasks: []taskspec.TaskGroup{worker}, Command: "true"}
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	rv, err := StartRendezvous(RendezvousConfig{AppID: "application_1_0001", Job: job, Secret: secret, Host: "127.0.0.1", Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	defer rv.Close(0)
	rv.Assign(worker0, "container_1_0001_01_000002")
	c := launcherClient(t, rv, secret, "container_1_0001_01_000002")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, _, err = c.WaitCredentials(ctx, worker0, 0)
	require.ErrorIs(t, err, rendezvous.ErrNotServed)
	require.Less(t, time.Since(start), 2*time.Second, "answered at once, not held")
}
