package rendezvous

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/reqsign"
)

// serverSide turns a client request into what the server sees.
func serverSide(req *http.Request, body []byte) *http.Request {
	in := httptest.NewRequest(req.Method, req.URL.RequestURI(), bytes.NewReader(body))
	in.Header = req.Header.Clone()
	return in
}

func testKeys(t testing.TB, secret []byte, container string) keys {
	t.Helper()
	k, err := newKeys(ContainerKey(secret, container))
	require.NoError(t, err)
	return k
}

// verifyRequest is the server's check of a request's signed headers.
func verifyRequest(t testing.TB, secret []byte, req *http.Request, now time.Time) error {
	h, err := reqsign.Parse(requestPurpose, req)
	if err != nil {
		return err
	}
	return reqsign.NewVerifier(5*time.Minute, 10).Verify(h, testKeys(t, secret, h.Signer).mac, now)
}

func TestSignVerifyRoundTrip(t *testing.T) {
	secret := testSecret(t)
	k := testKeys(t, secret, testContainer)
	body := []byte(`{"task":"worker:0"}`)
	req, _ := http.NewRequest("POST", "http://am:1/rendezvous/v1/register?x=1", nil)
	now := time.Now()
	wire, _, err := k.sign(req, testContainer, body, now)
	require.NoError(t, err)
	require.NotContains(t, string(wire), "worker:0", "the body is sealed")
	in := serverSide(req, wire)
	require.NoError(t, verifyRequest(t, secret, in, now))
	h, err := reqsign.Parse(requestPurpose, in)
	require.NoError(t, err)
	plain, err := k.open(wire, requestAD(h.Request))
	require.NoError(t, err)
	require.Equal(t, body, plain)
	require.NoError(t, h.CheckBody(wire))
}

func TestContainerKeysDiffer(t *testing.T) {
	secret := testSecret(t)
	a, b := ContainerKey(secret, "container_1_0001_01_000002"), ContainerKey(secret, "container_1_0001_01_000003")
	require.Len(t, a, 32)
	require.NotEqual(t, a, b)
	require.NotEqual(t, secret, a)
	require.Equal(t, a, ContainerKey(secret, "container_1_0001_01_000002"))
}

func TestVerifyRefuses(t *testing.T) {
	secret := testSecret(t)
	k := testKeys(t, secret, testContainer)
	other := testKeys(t, testSecret(t), testContainer)
	body := []byte(`{"task":"worker:0","host":"h","port":1}`)
	now := time.Now()
	signed := func(k keys, at time.Time) *http.Request {
		req, _ := http.NewRequest("POST", "http://am:1/rendezvous/v1/register", nil)
		_, _, err := k.sign(req, testContainer, body, at)
		require.NoError(t, err)
		return req
	}
	cases := map[string]struct {
		req  *http.Request
		want string
	}{
		"wrong secret": {signed(other, now), "bad signature"},
		"stale":        {signed(k, now.Add(-10*time.Minute)), "timestamp off"},
		"future":       {signed(k, now.Add(10*time.Minute)), "timestamp off"},
		"unsigned":     {func() *http.Request { r, _ := http.NewRequest("POST", "http://am:1/x", nil); return r }(), "unsigned"},
		"tampered nonce": {func() *http.Request {
			r := signed(k, now)
			r.Header.Set(reqsign.HeaderNonce, "00000000000000000000000000000000")
			return r
		}(), "bad signature"},
		"bad nonce": {func() *http.Request { r := signed(k, now); r.Header.Set(reqsign.HeaderNonce, "zz"); return r }(), "malformed nonce"},
		"tampered time": {func() *http.Request {
			r := signed(k, now)
			r.Header.Set(reqsign.HeaderTimestamp, "1")
			return r
		}(), "bad signature"},
		"tampered digest": {func() *http.Request {
			r := signed(k, now)
			r.Header.Set(reqsign.HeaderContentSHA256, reqsign.Digest([]byte("another body")))
			return r
		}(), "bad signature"},
		"another container": {func() *http.Request {
			r := signed(k, now)
			r.Header.Set(reqsign.HeaderSigner, "container_1_0001_01_000009")
			return r
		}(), "bad signature"},
		"bad container": {func() *http.Request {
			r := signed(k, now)
			r.Header.Set(reqsign.HeaderSigner, "container 1")
			return r
		}(), "malformed container"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			require.ErrorContains(t, verifyRequest(t, secret, serverSide(c.req, nil), now), c.want)
		})
	}
	t.Run("tampered query", func(t *testing.T) {
		in := serverSide(signed(k, now), nil)
		in.RequestURI += "?task=chief:0"
		require.ErrorContains(t, verifyRequest(t, secret, in, now), "bad signature")
	})
}

func TestResponseSignature(t *testing.T) {
	k := testKeys(t, testSecret(t), testContainer)
	body := []byte(`{"cluster":{}}`)
	wire, err := k.seal(body, responseAD("s1", 200))
	require.NoError(t, err)
	require.NotContains(t, string(wire), "cluster")
	h := http.Header{}
	h.Set(reqsign.HeaderSignature, k.signResponse("s1", 200, wire))
	got, err := k.checkResponse(signed{sig: "s1"}, 200, h, wire)
	require.NoError(t, err)
	require.Equal(t, body, got)
	_, err = k.checkResponse(signed{sig: "s2"}, 200, h, wire)
	require.ErrorIs(t, err, errBadResponseSignature, "bound to the request's signature")
	_, err = k.checkResponse(signed{sig: "s1"}, 204, h, wire)
	require.ErrorIs(t, err, errBadResponseSignature, "bound to the status")
	_, err = k.checkResponse(signed{sig: "s1"}, 200, h, append(wire[:len(wire):len(wire)], 0))
	require.ErrorIs(t, err, errBadResponseSignature, "bound to the body")
	_, err = k.checkResponse(signed{sig: "s1"}, 200, http.Header{}, wire)
	require.ErrorIs(t, err, errUnsignedResponse)
	// Signed but sealed for another request: refused all the same.
	other, err := k.seal(body, responseAD("s2", 200))
	require.NoError(t, err)
	h.Set(reqsign.HeaderSignature, k.signResponse("s1", 200, other))
	_, err = k.checkResponse(signed{sig: "s1"}, 200, h, other)
	require.ErrorIs(t, err, errBadResponseSignature)
}

func TestShortSecretRefused(t *testing.T) {
	_, err := NewServer(make([]byte, 8), nil)
	require.ErrorContains(t, err, "at least 16")
	_, err = NewClient("am:1", testContainer, nil)
	require.Error(t, err)
	_, err = NewClient("am:1", "", testSecret(t))
	require.ErrorContains(t, err, "no container id")
}
