package appmaster

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
)

func TestRefreshWait(t *testing.T) {
	for _, tc := range []struct{ left, want time.Duration }{
		{20 * time.Second, 15 * time.Second}, // the test cluster's renew interval
		{24 * time.Hour, 12 * time.Hour},     // Hadoop's default: capped
		{2 * time.Second, 5 * time.Second},   // never busy-loops
		{-time.Minute, 5 * time.Second},      // already expired: soon, not now
		{8 * time.Hour, 6 * time.Hour},
	} {
		if got := refreshWait(tc.left); got != tc.want {
			t.Errorf("refreshWait(%s) = %s, want %s", tc.left, got, tc.want)
		}
	}
}

// Fresh tokens replace the ones under the same alias (the service, as the
// client stored them); the AMRMToken and other tokens stay for the AM, and
// what tasks get never holds the AMRMToken.
func TestReplaceTokens(t *testing.T) {
	creds := security.NewCredentials()
	creds.AddToken("127.0.0.1:8020", security.Token{Identifier: []byte("old"), Password: []byte("p"), Kind: security.KindHDFSDelegation, Service: "127.0.0.1:8020"})
	creds.AddToken("amrm", security.Token{Identifier: []byte("am"), Password: []byte("p"), Kind: security.KindAMRMToken})
	s := &amSecurity{creds: creds}
	fresh := security.Token{Identifier: []byte("new"), Password: []byte("q"), Kind: security.KindHDFSDelegation, Service: "127.0.0.1:8020"}
	next := s.replaceTokens([]security.Token{fresh})
	got, ok := next.Token("127.0.0.1:8020")
	if !ok || string(got.Identifier) != "new" {
		t.Fatalf("HDFS token after refresh = %v, %v", got, ok)
	}
	if _, ok := next.Token("amrm"); !ok {
		t.Error("the AM lost its AMRMToken")
	}
	if old, _ := creds.Token("127.0.0.1:8020"); string(old.Identifier) != "old" {
		t.Error("replaceTokens modified the credentials it was given")
	}
	task, err := security.ReadCredentials(bytes.NewReader(s.taskTokens([]byte("0123456789abcdef0123456789abcdef"))))
	if err != nil {
		t.Fatal(err)
	}
	if len(task.TokensOfKind(security.KindAMRMToken)) != 0 {
		t.Error("task credentials hold the AMRMToken")
	}
	if tok, ok := task.Token("127.0.0.1:8020"); !ok || string(tok.Identifier) != "new" {
		t.Errorf("task credentials hold %v, want the fresh token", tok)
	}
}

// TestAMTakesKeytabOutOfCredentials: the keytab reaches the AM sealed, in
// its working directory (a link to the NodeManager's localized copy of the
// staging file), and the key to it inside its container's credentials.
// RunAM's first step rewrites the container's token file, which the job's
// tasks on the AM's node can read, without the key (its other entries and
// its mode kept), and newAMSecurity takes the key out of the credentials in
// memory, reads the sealed keytab and deletes both the link and the file,
// even when the login then fails (here: no KDC answers): the credentials
// tasks get never hold the key, and no file of the keytab is left.
func TestAMTakesKeytabOutOfCredentials(t *testing.T) {
	kt := keytab.New()
	require.NoError(t, kt.AddEntry("alice", "EXAMPLE.COM", "alice secret", time.Now(), 1, etypeID.AES128_CTS_HMAC_SHA1_96))
	ktBytes, err := kt.Marshal()
	require.NoError(t, err)

	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	kdc := ln.Addr().String()
	ln.Close() // a KDC that is not there
	krb5 := filepath.Join(dir, "krb5.conf")
	require.NoError(t, os.WriteFile(krb5, []byte("[libdefaults]\n default_realm = EXAMPLE.COM\n udp_preference_limit = 1\n[realms]\n EXAMPLE.COM = {\n  kdc = "+kdc+"\n }\n"), 0o644))

	creds := security.NewCredentials()
	creds.AddToken("amrm", security.Token{Identifier: []byte("am"), Password: []byte("p"), Kind: security.KindAMRMToken})
	creds.AddToken("127.0.0.1:8020", security.Token{Identifier: []byte("hdfs"), Password: []byte("q"), Kind: security.KindHDFSDelegation, Service: "127.0.0.1:8020"})
	key, err := security.NewKeytabKey()
	require.NoError(t, err)
	sealed, err := security.SealKeytab(key, ktBytes, "application_1_0001")
	require.NoError(t, err)
	creds.AddSecret(contract.KeytabSecret, key)
	work := filepath.Join(dir, "work") // the AM's working directory
	filecache := filepath.Join(dir, "filecache")
	require.NoError(t, os.Mkdir(work, 0o755))
	require.NoError(t, os.Mkdir(filecache, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(filecache, contract.SealedKeytabName), sealed, 0o600))
	require.NoError(t, os.Symlink(filepath.Join(filecache, contract.SealedKeytabName), filepath.Join(work, contract.SealedKeytabName)))
	tokenFile := filepath.Join(dir, "container_tokens")
	require.NoError(t, os.WriteFile(tokenFile, creds.Marshal(), 0o640))
	onDisk, err := security.ReadCredentialsFile(tokenFile)
	require.NoError(t, err)
	getenv := func(k string) string {
		switch k {
		case contract.EnvTokenFile:
			return tokenFile
		case security.EnvKrb5Config:
			return krb5
		}
		return ""
	}
	jf := contract.JobFile{AppID: "application_1_0001", User: "alice", Kerberos: &contract.JobKerberos{Principal: "alice@EXAMPLE.COM", KeytabSecret: contract.KeytabSecret}}

	require.Equal(t, []string{rendezvous.SecretAlias, contract.StatusKeyAlias, contract.KeytabSecret}, amSecretAliases(jf, onDisk))
	require.NoError(t, dropSecretsFromTokenFile(tokenFile, amSecretAliases(jf, onDisk)...))
	_, err = newAMSecurity(context.Background(), jf, onDisk, work, getenv)
	require.ErrorContains(t, err, "cannot reach the KDC", "the login from the in-memory keytab was tried")
	for _, d := range []string{work, filecache} {
		left, err := os.ReadDir(d)
		require.NoError(t, err)
		require.Empty(t, left, "the sealed keytab is read once and deleted")
	}

	_, inMemory := onDisk.Secret(contract.KeytabSecret)
	require.False(t, inMemory, "the AM's credentials still hold the keytab")
	task, err := security.ReadCredentials(bytes.NewReader(TaskTokens(onDisk, []byte("0123456789abcdef0123456789abcdef"))))
	require.NoError(t, err)
	_, inTask := task.Secret(contract.KeytabSecret)
	require.False(t, inTask, "a task's credentials hold the keytab")

	file, err := os.ReadFile(tokenFile)
	require.NoError(t, err)
	require.False(t, bytes.Contains(file, key), "the container's token file still holds the keytab's key")
	after, err := security.ReadCredentialsFile(tokenFile)
	require.NoError(t, err)
	require.Empty(t, after.SecretAliases())
	require.Equal(t, 2, after.NumTokens(), "the AMRMToken and the HDFS token stay for the AM")
	st, err := os.Stat(tokenFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), st.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 4, "no temporary copy left beside the token file: %v", entries)

	// A job file that names a keytab the credentials do not hold: one line.
	_, err = newAMSecurity(context.Background(), jf, security.NewCredentials(), work, getenv)
	require.ErrorContains(t, err, `the AM's credentials hold no secret "tfyarn.keytab-key"`)
	// A key without its sealed keytab: one line.
	withKey := security.NewCredentials()
	withKey.AddSecret(contract.KeytabSecret, key)
	_, err = newAMSecurity(context.Background(), jf, withKey, work, getenv)
	require.ErrorContains(t, err, "appmaster: the job was submitted with a keytab: open "+filepath.Join(work, contract.SealedKeytabName)+": no such file or directory")
}
