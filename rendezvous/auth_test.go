package rendezvous

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serverSide turns a client request into what the server sees.
func serverSide(req *http.Request, body []byte) *http.Request {
	in := httptest.NewRequest(req.Method, req.URL.RequestURI(), bytes.NewReader(body))
	in.Header = req.Header.Clone()
	return in
}

func TestSignVerifyRoundTrip(t *testing.T) {
	secret := testSecret(t)
	sg, err := newSigner(secret)
	require.NoError(t, err)
	body := []byte(`{"task":"worker:0"}`)
	req, _ := http.NewRequest("POST", "http://am:1/rendezvous/v1/register?x=1", bytes.NewReader(body))
	now := time.Now()
	nonce, err := sg.sign(req, body, now)
	require.NoError(t, err)
	v, err := sg.verify(serverSide(req, body), body, now, time.Minute)
	require.NoError(t, err)
	require.Equal(t, nonce, v.nonce)
}

func TestVerifyRefuses(t *testing.T) {
	secret := testSecret(t)
	sg, _ := newSigner(secret)
	other, _ := newSigner(testSecret(t))
	body := []byte(`{"task":"worker:0","host":"h","port":1}`)
	now := time.Now()
	signed := func(s signer, at time.Time) *http.Request {
		req, _ := http.NewRequest("POST", "http://am:1/rendezvous/v1/register", bytes.NewReader(body))
		_, err := s.sign(req, body, at)
		require.NoError(t, err)
		return req
	}
	cases := map[string]struct {
		req  *http.Request
		body []byte
		want string
	}{
		"wrong secret":  {signed(other, now), body, "bad signature"},
		"tampered body": {signed(sg, now), []byte(`{"task":"worker:1","host":"h","port":1}`), "bad signature"},
		"stale":         {signed(sg, now.Add(-10*time.Minute)), body, "timestamp off"},
		"future":        {signed(sg, now.Add(10*time.Minute)), body, "timestamp off"},
		"unsigned":      {func() *http.Request { r, _ := http.NewRequest("POST", "http://am:1/x", nil); return r }(), nil, "unsigned"},
		"tampered nonce": {func() *http.Request {
			r := signed(sg, now)
			r.Header.Set(HeaderNonce, "00000000000000000000000000000000")
			return r
		}(), body, "bad signature"},
		"bad nonce": {func() *http.Request { r := signed(sg, now); r.Header.Set(HeaderNonce, "zz"); return r }(), body, "malformed nonce"},
		"tampered time": {func() *http.Request {
			r := signed(sg, now)
			r.Header.Set(HeaderTimestamp, "1")
			return r
		}(), body, "bad signature"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := sg.verify(serverSide(c.req, c.body), c.body, now, 5*time.Minute)
			require.ErrorContains(t, err, c.want)
		})
	}
	t.Run("tampered query", func(t *testing.T) {
		req := signed(sg, now)
		in := serverSide(req, body)
		in.RequestURI += "?task=chief:0"
		_, err := sg.verify(in, body, now, 5*time.Minute)
		require.ErrorContains(t, err, "bad signature")
	})
}

func TestReplayCache(t *testing.T) {
	c := newReplayCache(2)
	now := time.Now()
	require.NoError(t, c.add("a", now, now.Add(time.Minute)))
	require.ErrorIs(t, c.add("a", now, now.Add(time.Minute)), errReplay)
	require.NoError(t, c.add("b", now, now.Add(time.Minute)))
	require.ErrorIs(t, c.add("c", now, now.Add(time.Minute)), errCacheFull)
	// Once the window has passed, old nonces are forgotten (the timestamp
	// check refuses their requests by then) and room frees up.
	later := now.Add(2 * time.Minute)
	require.NoError(t, c.add("c", later, later.Add(time.Minute)))
}

func TestResponseSignature(t *testing.T) {
	sg, _ := newSigner(testSecret(t))
	body := []byte(`{"cluster":{}}`)
	h := http.Header{}
	h.Set(HeaderSignature, hexMAC(sg.responseMAC("n1", 200, body)))
	require.NoError(t, sg.checkResponse("n1", 200, h, body))
	require.ErrorIs(t, sg.checkResponse("n2", 200, h, body), errBadResponseSignature, "bound to the request's nonce")
	require.ErrorIs(t, sg.checkResponse("n1", 204, h, body), errBadResponseSignature, "bound to the status")
	require.ErrorIs(t, sg.checkResponse("n1", 200, h, []byte(`{}`)), errBadResponseSignature, "bound to the body")
	require.ErrorIs(t, sg.checkResponse("n1", 200, http.Header{}, body), errUnsignedResponse)
}

func TestShortSecretRefused(t *testing.T) {
	_, err := NewServer(make([]byte, 8), nil)
	require.ErrorContains(t, err, "at least 16")
	_, err = NewClient("am:1", nil)
	require.Error(t, err)
}
