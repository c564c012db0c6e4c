package executor

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/syncbuf"
	"github.com/tfyarn/tfyarn/taskspec"
)

func hdfsToken(id, service string) security.Token {
	return security.Token{Identifier: []byte(id), Password: []byte("pw-" + id), Kind: security.KindHDFSDelegation, Service: service}
}

// containerCreds is what the NodeManager writes for a task: the AM's
// tokens plus the rendezvous secret.
func containerCreds(secret []byte) *security.Credentials {
	c := security.NewCredentials()
	c.AddToken("hdfs", hdfsToken("hdfs-at-launch", "ha-hdfs:nn"))
	c.AddToken("timeline", security.Token{Identifier: []byte("tl"), Password: []byte("tl-pw"), Kind: security.KindTimelineDelegation, Service: "ats:8188"})
	rendezvous.AddSecret(c, secret)
	return c
}

func readCreds(t *testing.T, path string) *security.Credentials {
	t.Helper()
	c, err := security.ReadCredentialsFile(path)
	require.NoError(t, err)
	return c
}

func requireNoSecret(t *testing.T, path string, secret []byte) {
	t.Helper()
	c := readCreds(t, path)
	_, ok := c.Secret(rendezvous.SecretAlias)
	require.False(t, ok, "%s holds the rendezvous secret", path)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(raw), string(secret))
}

func TestTokenFileMergeAndAtomicRewrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, TokenFileName)
	secret := []byte("0123456789abcdef0123456789abcdef")
	f, err := writeTokenFile(path, containerCreds(secret))
	require.NoError(t, err)
	requireNoSecret(t, path, secret)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// A reader holding the old file keeps reading the old content: the
	// new one replaces it by rename, not in place.
	old, err := os.Open(path)
	require.NoError(t, err)
	defer old.Close()

	fresh := security.NewCredentials()
	fresh.AddToken("hdfs", hdfsToken("hdfs-renewed", "ha-hdfs:nn"))
	fresh.AddToken("hdfs2", hdfsToken("other-nn", "ha-hdfs:nn2"))
	fresh.AddToken("amrm", security.Token{Identifier: []byte("amrm"), Kind: security.KindAMRMToken})
	rendezvous.AddSecret(fresh, secret) // never written, even if an AM sent it
	changed, err := f.merge(fresh)
	require.NoError(t, err)
	require.True(t, changed)

	got := readCreds(t, path)
	tok, ok := got.Token("hdfs")
	require.True(t, ok)
	require.Equal(t, "hdfs-renewed", string(tok.Identifier), "the same alias is replaced")
	_, ok = got.Token("timeline")
	require.True(t, ok, "other aliases are kept")
	_, ok = got.Token("hdfs2")
	require.True(t, ok, "new aliases are added")
	require.Empty(t, got.TokensOfKind(security.KindAMRMToken))
	requireNoSecret(t, path, secret)
	st, err = os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	oldCreds, err := security.ReadCredentials(old)
	require.NoError(t, err)
	tok, _ = oldCreds.Token("hdfs")
	require.Equal(t, "hdfs-at-launch", string(tok.Identifier))

	// The same again changes nothing and rewrites nothing.
	changed, err = f.merge(fresh)
	require.NoError(t, err)
	require.False(t, changed)
	st2, err := os.Stat(path)
	require.NoError(t, err)
	require.True(t, os.SameFile(st, st2))

	// No temporary file is left behind.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)

	// A directory that cannot be written: an error, the old file intact.
	require.NoError(t, os.Chmod(dir, 0o500))
	defer os.Chmod(dir, 0o700)
	if os.Geteuid() != 0 {
		fresh.AddToken("hdfs3", hdfsToken("third", "ha-hdfs:nn3"))
		_, err = f.merge(fresh)
		require.Error(t, err)
		_, ok = readCreds(t, path).Token("hdfs3")
		require.False(t, ok)
	}
}

func TestRefreshTokensRetriesAndStops(t *testing.T) {
	path := filepath.Join(t.TempDir(), TokenFileName)
	f, err := writeTokenFile(path, containerCreds([]byte("0123456789abcdef")))
	require.NoError(t, err)
	fresh := security.NewCredentials()
	fresh.AddToken("hdfs", hdfsToken("renewed", "ha-hdfs:nn"))
	var afters []uint64
	calls := 0
	wait := func(ctx context.Context, task taskspec.TaskID, after uint64) (rendezvous.CredentialsUpdate, *security.Credentials, error) {
		calls++
		afters = append(afters, after)
		switch calls {
		case 1:
			return rendezvous.CredentialsUpdate{}, nil, errors.New("AM refused: 410")
		case 2:
			return rendezvous.CredentialsUpdate{Version: 4}, fresh, nil
		case 3:
			return rendezvous.CredentialsUpdate{Version: 5}, fresh, nil // same content
		default:
			return rendezvous.CredentialsUpdate{}, nil, &rendezvous.StatusError{Status: 404, Code: "not_found"}
		}
	}
	var told []*security.Credentials
	f.onChange = func(c *security.Credentials) { told = append(told, c) }
	var buf syncbuf.Buffer
	done := make(chan struct{})
	go func() {
		refreshTokens(context.Background(), f, id(taskspec.Worker, 0), wait, &logger{w: &buf}, time.Millisecond, 10*time.Millisecond)
		close(done)
	}()
	select {
	case <-done: // an AM without the endpoint ends the refresh
	case <-time.After(5 * time.Second):
		t.Fatal("refreshTokens did not stop on 404")
	}
	require.Equal(t, []uint64{0, 0, 4, 5}, afters)
	out := buf.String()
	require.Contains(t, out, "could not get fresh credentials from the AM (will retry): AM refused: 410")
	require.Equal(t, 1, strings.Count(out, "refreshed"), out)
	require.Contains(t, out, "version 4")
	require.Contains(t, out, "ha-hdfs:nn")
	require.Contains(t, out, hdfsToken("renewed", "").Fingerprint())
	require.NotContains(t, out, "pw-renewed")
	require.NotContains(t, out, "not_found", "an old AM ends the refresh quietly")
	tok, _ := readCreds(t, path).Token("hdfs")
	require.Equal(t, "renewed", string(tok.Identifier))
	// What the launcher connects with follows: told once, for the one change.
	require.Len(t, told, 1)
	tok, _ = told[0].Token("hdfs")
	require.Equal(t, "renewed", string(tok.Identifier))

	// Cancelled while waiting: ends at once.
	ctx, cancel := context.WithCancel(context.Background())
	blocked := func(ctx context.Context, _ taskspec.TaskID, _ uint64) (rendezvous.CredentialsUpdate, *security.Credentials, error) {
		<-ctx.Done()
		return rendezvous.CredentialsUpdate{}, nil, ctx.Err()
	}
	done = make(chan struct{})
	go func() {
		refreshTokens(ctx, f, id(taskspec.Worker, 0), blocked, &logger{w: &buf}, time.Millisecond, time.Millisecond)
		close(done)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("refreshTokens did not end with its context")
	}
}

// The program's token file never holds the rendezvous secret, and the
// NodeManager's loses it once the launcher has read it.
func TestProgramTokenFileHasNoSecret(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	dir := t.TempDir()
	nmFile := filepath.Join(dir, "container_tokens")
	key := rendezvous.ContainerKey(a.secret, "container_test_worker_0") // what the AM gives this container
	require.NoError(t, containerCreds(key).WriteFile(nmFile, security.FormatWritable))
	t.Setenv(contract.EnvTask, "worker:0")
	t.Setenv(contract.EnvAMAddress, a.addr)
	t.Setenv(contract.EnvTokenFile, nmFile)
	t.Setenv(contract.EnvNMHost, "127.0.0.1")
	t.Setenv(contract.EnvContainerID, "container_test_worker_0")
	cfg, err := ConfigFromEnv([]string{"sh", "-c", `echo "tokens=$HADOOP_TOKEN_FILE_LOCATION"; cp "$HADOOP_TOKEN_FILE_LOCATION" seen; cp "` + nmFile + `" seen-nm`})
	require.NoError(t, err)
	require.Equal(t, key, cfg.Secret)
	_, ok := cfg.Credentials.Secret(rendezvous.SecretAlias)
	require.False(t, ok)
	require.Equal(t, 2, cfg.Credentials.NumTokens())

	l := a.newLaunch(id(taskspec.Worker, 0))
	cfg.Stdout, cfg.Stderr, cfg.Signals = l.stdout, l.stderr, l.signals
	cfg.Dir, cfg.Env = dir, os.Environ()
	cfg.ClientOptions, cfg.ReportTimeout, cfg.RendezvousTimeout = l.cfg.ClientOptions, l.cfg.ReportTimeout, l.cfg.RendezvousTimeout
	l.cfg = cfg
	o := l.run(t)
	require.NoError(t, o.err)
	require.Equal(t, 0, o.code, l.stderr.String())

	require.Contains(t, l.stdout.String(), "tokens="+filepath.Join(dir, TokenFileName)+"\n")
	for _, f := range []string{"seen", "seen-nm", TokenFileName, "container_tokens"} {
		requireNoSecret(t, filepath.Join(dir, f), key)
		c := readCreds(t, filepath.Join(dir, f))
		tok, ok := c.Token("hdfs")
		require.True(t, ok, f)
		require.Equal(t, "hdfs-at-launch", string(tok.Identifier))
	}
	require.NotContains(t, l.stderr.String(), "could not")
}

// A running program sees the tokens the AM publishes: the shell waits
// until its token file changes, then prints a token's service from it.
func TestRunningProgramSeesRefreshedTokens(t *testing.T) {
	a := startAM(t, group(taskspec.Worker, 1))
	dir := t.TempDir()
	script := `f="$HADOOP_TOKEN_FILE_LOCATION"; before=$(cksum < "$f"); echo started; i=0
while [ "$(cksum < "$f")" = "$before" ]; do i=$((i+1)); [ $i -gt 400 ] && exit 9; sleep 0.05; done
echo "service: $(grep -a -o 'svc-refreshed-[0-9]*' "$f")"`
	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", script)
	l.cfg.Dir = dir
	l.cfg.Credentials = rendezvous.TaskCredentials(containerCreds(a.secret))
	ch := l.start(t)
	waitFor(t, l.stdout, "started")

	fresh := containerCreds(a.secret) // what the AM holds, renewed
	fresh.AddToken("hdfs", hdfsToken("hdfs-renewed", "svc-refreshed-42"))
	fresh.AddToken("amrm", security.Token{Identifier: []byte("amrm"), Password: []byte("amrm-pw"), Kind: security.KindAMRMToken, Service: "rm"})
	_, err := a.board.PublishCredentials(fresh)
	require.NoError(t, err)

	o := wait(t, ch, l)
	require.NoError(t, o.err)
	require.Equal(t, 0, o.code, l.stderr.String())
	require.Contains(t, l.stdout.String(), "service: svc-refreshed-42\n")
	stderr := l.stderr.String()
	require.Contains(t, stderr, "refreshed with version 1 of the AM's credentials")
	require.Contains(t, stderr, hdfsToken("hdfs-renewed", "").Fingerprint())
	require.NotContains(t, stderr, "pw-hdfs-renewed")

	got := readCreds(t, filepath.Join(dir, TokenFileName))
	tok, _ := got.Token("hdfs")
	require.Equal(t, "hdfs-renewed", string(tok.Identifier))
	_, ok := got.Token("timeline")
	require.True(t, ok)
	require.Empty(t, got.TokensOfKind(security.KindAMRMToken))
	requireNoSecret(t, filepath.Join(dir, TokenFileName), a.secret)
}

// oldHandler hides the Board's credentials: an AM from before them.
type oldHandler struct{ rendezvous.Handler }

func TestOldAMWithoutCredentialsEndpoint(t *testing.T) {
	secret, err := rendezvous.NewSecret()
	require.NoError(t, err)
	board, err := rendezvous.NewBoard(rendezvous.BoardConfig{Groups: []taskspec.TaskGroup{group(taskspec.Worker, 1)}})
	require.NoError(t, err)
	srv, err := rendezvous.NewServer(secret, oldHandler{board})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { _ = srv.Serve(ctx, ln); close(served) }()
	t.Cleanup(func() { cancel(); <-served; board.Close() })
	a := &am{board: board, addr: ln.Addr().String(), secret: secret}

	l := a.newLaunch(id(taskspec.Worker, 0), "sh", "-c", "sleep 0.5; cat \"$HADOOP_TOKEN_FILE_LOCATION\" > /dev/null && echo ok")
	l.cfg.Dir = t.TempDir()
	l.cfg.Credentials = rendezvous.TaskCredentials(containerCreds(secret))
	o := l.run(t)
	require.NoError(t, o.err)
	require.Equal(t, 0, o.code, l.stderr.String())
	require.Contains(t, l.stdout.String(), "ok")
	require.NotContains(t, l.stderr.String(), "credentials", "no complaint about an AM without the endpoint")
}
