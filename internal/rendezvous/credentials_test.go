package rendezvous

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/taskspec"
)

func hdfsToken(id, service string) security.Token {
	return security.Token{Identifier: []byte(id), Password: []byte("password-of-" + id), Kind: security.KindHDFSDelegation, Service: service}
}

// amCreds is what an AM holds: its AMRMToken, an HDFS token, the secret.
func amCreds(secret []byte, hdfsID string) *security.Credentials {
	c := security.NewCredentials()
	c.AddToken("amrm", security.Token{Identifier: []byte("amrm"), Password: []byte("amrm-pw"), Kind: security.KindAMRMToken, Service: "rm:8030"})
	c.AddToken("hdfs", hdfsToken(hdfsID, "ha-hdfs:nn"))
	AddSecret(c, secret)
	return c
}

func credsURL(addr string, q string) string {
	return "http://" + addr + PathPrefix + "credentials?" + q
}

func TestCredentialsEndpointVersions(t *testing.T) {
	secret := testSecret(t)
	b := watch(newBoard(t, 0, group(taskspec.Worker, 1)))
	srv := startServer(t, secret, b)
	c := newTestClient(t, srv.addr, secret, testContainer, WithLongPoll(200*time.Millisecond))
	w0 := task(taskspec.Worker, 0)

	// Nothing published: the long poll answers "no change" after its wait.
	start := time.Now()
	status, body, _ := sendSigned(t, signedRequest(t, secret, http.MethodGet, credsURL(srv.addr, "task=worker:0&after=0&wait=200"), nil))
	require.Equal(t, http.StatusNoContent, status, body)
	require.GreaterOrEqual(t, time.Since(start), 190*time.Millisecond)
	require.Less(t, time.Since(start), 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, _, err := c.WaitCredentials(ctx, w0, 0)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// A waiting launcher gets version 1 as soon as it is published.
	for len(b.credWaits) > 0 { // the polls above are over
		<-b.credWaits
	}
	got := make(chan CredentialsUpdate, 1)
	go func() {
		u, _, err := c.WaitCredentials(ctxTimeout(t, 10*time.Second), w0, 0)
		if err == nil {
			got <- u
		}
		close(got)
	}()
	await(t, b.credWaits, 1, 10*time.Second, "the launcher's long poll")
	v, err := b.PublishCredentials(amCreds(secret, "id-1"))
	require.NoError(t, err)
	require.Equal(t, uint64(1), v)
	select {
	case u := <-got:
		require.Equal(t, uint64(1), u.Version)
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting launcher did not get version 1")
	}

	// What is published: no AMRMToken, no rendezvous secret.
	u, creds, err := c.WaitCredentials(ctxTimeout(t, 5*time.Second), w0, 0)
	require.NoError(t, err)
	require.Equal(t, uint64(1), u.Version)
	require.Empty(t, creds.TokensOfKind(security.KindAMRMToken))
	_, ok := creds.Secret(SecretAlias)
	require.False(t, ok)
	require.NotContains(t, string(u.Credentials), string(secret))
	tok, ok := creds.Token("hdfs")
	require.True(t, ok)
	require.Equal(t, "id-1", string(tok.Identifier))

	// Up to date: wait, then "no change"; the same content again is no
	// new version; a new token is version 2, at once.
	status, _, _ = sendSigned(t, signedRequest(t, secret, http.MethodGet, credsURL(srv.addr, "task=worker:0&after=1&wait=100"), nil))
	require.Equal(t, http.StatusNoContent, status)
	v, err = b.PublishCredentials(amCreds(secret, "id-1"))
	require.NoError(t, err)
	require.Equal(t, uint64(1), v)
	v, err = b.PublishCredentials(amCreds(secret, "id-2"))
	require.NoError(t, err)
	require.Equal(t, uint64(2), v)
	u, creds, err = c.WaitCredentials(ctxTimeout(t, 5*time.Second), w0, 1)
	require.NoError(t, err)
	require.Equal(t, uint64(2), u.Version)
	tok, _ = creds.Token("hdfs")
	require.Equal(t, "id-2", string(tok.Identifier))
	require.Equal(t, u.Version, b.PublishedCredentials().Version)

	// A version this AM never issued (a launcher that knew an earlier AM
	// attempt) gets the current one at once.
	start = time.Now()
	u, _, err = c.WaitCredentials(ctxTimeout(t, 5*time.Second), w0, 7)
	require.NoError(t, err)
	require.Equal(t, uint64(2), u.Version)
	require.Less(t, time.Since(start), 150*time.Millisecond)

	// Bad requests.
	for q, want := range map[string]int{
		"task=worker:0&after=x":  http.StatusBadRequest,
		"task=worker:0&after=-1": http.StatusBadRequest,
		"after=1":                http.StatusBadRequest,
		"task=worker:5&after=0":  http.StatusNotFound,
	} {
		status, body, _ := sendSigned(t, signedRequest(t, secret, http.MethodGet, credsURL(srv.addr, q), nil))
		require.Equal(t, want, status, "%s: %s", q, body)
	}
	_, _, err = c.WaitCredentials(ctxTimeout(t, 5*time.Second), task(taskspec.Worker, 5), 0)
	require.ErrorIs(t, err, ErrUnknownTask)
	status, _, _ = sendSigned(t, signedRequest(t, secret, http.MethodPost, credsURL(srv.addr, "task=worker:0"), []byte("{}")))
	require.Equal(t, http.StatusMethodNotAllowed, status)
}

func TestCredentialsEndpointNeedsAuth(t *testing.T) {
	secret := testSecret(t)
	b := newBoard(t, 0, group(taskspec.Worker, 1))
	_, err := b.PublishCredentials(amCreds(secret, "id-1"))
	require.NoError(t, err)
	srv := startServer(t, secret, b)
	u := credsURL(srv.addr, "task=worker:0&after=0&wait=10")

	// Unsigned: refused, and nothing of the credentials in the answer.
	resp, err := http.Get(u)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	status, body, signed := sendSigned(t, signedRequest(t, testSecret(t), http.MethodGet, u, nil))
	require.Equal(t, http.StatusUnauthorized, status)
	require.False(t, signed)
	require.NotContains(t, body, "password")

	// A replayed request is refused.
	req := signedRequest(t, secret, http.MethodGet, u, nil)
	status, body, signed = sendSigned(t, req)
	require.Equal(t, http.StatusOK, status, body)
	require.True(t, signed)
	require.Contains(t, body, `"version":1`)
	again, err := http.NewRequest(http.MethodGet, u, nil)
	require.NoError(t, err)
	again.Header = req.Header.Clone()
	status, _ = send(t, again)
	require.Equal(t, http.StatusUnauthorized, status)

	// A request body over MaxBodyBytes is refused before it is read.
	status, _, signed = sendSigned(t, signedRequest(t, secret, http.MethodGet, u, make([]byte, MaxBodyBytes+1)))
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	require.False(t, signed)

	// A client with another secret cannot verify the AM either.
	c := newTestClient(t, srv.addr, testSecret(t), testContainer)
	_, _, err = c.WaitCredentials(ctxTimeout(t, 3*time.Second), task(taskspec.Worker, 0), 0)
	require.ErrorIs(t, err, ErrUnauthorized)
}

// oldAM is a Handler that does not serve credentials, as an AM from before.
type oldAM struct{ Handler }

func TestCredentialsNotServed(t *testing.T) {
	secret := testSecret(t)
	srv := startServer(t, secret, oldAM{newBoard(t, 0, group(taskspec.Worker, 1))})
	c := newTestClient(t, srv.addr, secret, testContainer)
	_, _, err := c.WaitCredentials(ctxTimeout(t, 5*time.Second), task(taskspec.Worker, 0), 0)
	require.ErrorIs(t, err, ErrNotServed)
	require.False(t, errors.Is(err, ErrUnknownTask))
	var se *StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, http.StatusNotFound, se.Status)
}

func TestCredentialsSizeBounds(t *testing.T) {
	secret := testSecret(t)
	b := newBoard(t, 0, group(taskspec.Worker, 1))
	// Many tokens, well under the bound, travel whole.
	many := security.NewCredentials()
	for i := 0; i < 2000; i++ {
		n := strconv.Itoa(i)
		many.AddToken("hdfs-"+n, hdfsToken(strings.Repeat("i", 200)+n, "ha-hdfs:nn"+n))
	}
	require.Greater(t, len(many.Marshal()), MaxBodyBytes, "more than a request may carry")
	require.Less(t, len(many.Marshal()), MaxCredentialsBytes)
	_, err := b.PublishCredentials(many)
	require.NoError(t, err)
	srv := startServer(t, secret, b)
	c := newTestClient(t, srv.addr, secret, testContainer)
	_, got, err := c.WaitCredentials(ctxTimeout(t, 10*time.Second), task(taskspec.Worker, 0), 0)
	require.NoError(t, err)
	require.Equal(t, 2000, got.NumTokens())

	// Over the bound: refused, the published version stays.
	huge := security.NewCredentials()
	huge.AddSecret("big", make([]byte, MaxCredentialsBytes))
	_, err = b.PublishCredentials(huge)
	require.Error(t, err)
	require.Equal(t, uint64(1), b.PublishedCredentials().Version)

	// The decoder refuses oversized or malformed answers.
	_, _, err = DecodeCredentials(encodeCredentials(CredentialsUpdate{Version: 1, Credentials: make([]byte, MaxCredentialsBytes+1)}))
	require.Error(t, err)
	_, _, err = DecodeCredentials(encodeCredentials(CredentialsUpdate{Version: 0, Credentials: security.NewCredentials().Marshal()}))
	require.Error(t, err)
	_, _, err = DecodeCredentials(encodeCredentials(CredentialsUpdate{Version: 3, Credentials: []byte("not HDTS")}))
	require.Error(t, err)
	u, _, err := DecodeCredentials(encodeCredentials(CredentialsUpdate{Version: 3, Credentials: security.NewCredentials().Marshal()}))
	require.NoError(t, err)
	require.Equal(t, uint64(3), u.Version)
}

func FuzzDecodeCredentials(f *testing.F) {
	c := security.NewCredentials()
	c.AddToken("hdfs", hdfsToken("id", "ha-hdfs:nn"))
	c.AddSecret("s", []byte("k"))
	f.Add(encodeCredentials(CredentialsUpdate{Version: 1, Credentials: c.Marshal()}))
	f.Add([]byte(`{"version":2,"credentials":"SERUUwA="}`))
	f.Add([]byte(`{"version":18446744073709551615,"credentials":""}`))
	f.Add([]byte(`{"version":1,"credentials":"!!"}{}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		u, creds, err := DecodeCredentials(body)
		if err != nil {
			return
		}
		if u.Version == 0 || len(u.Credentials) > MaxCredentialsBytes || creds == nil {
			t.Fatalf("accepted version %d of %d bytes", u.Version, len(u.Credentials))
		}
		// What decodes re-encodes to an answer that decodes the same.
		u2, creds2, err := DecodeCredentials(encodeCredentials(u))
		if err != nil || u2.Version != u.Version || creds2.String() != creds.String() {
			t.Fatalf("round trip: %v", err)
		}
	})
}
