package reqsign

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const (
	testPurpose = "tfyarn-test-v1 request"
	testSigner  = "container_1_0001_01_000002"
)

var testKey = DeriveKey([]byte("0123456789abcdef0123456789abcdef"), "test key")

// sent is a request as it leaves the signer: method, target, headers, body.
type sent struct {
	method, target string
	header         http.Header
	body           []byte
}

func sign(t testing.TB, key []byte, purpose, target string, body []byte, at time.Time) sent {
	t.Helper()
	r, err := NewRequest(purpose, http.MethodPost, target, testSigner, at)
	require.NoError(t, err)
	h := http.Header{}
	r.Sign(key, body, h)
	return sent{method: http.MethodPost, target: target, header: h, body: body}
}

// received is s as the receiver's server hands it over.
func (s sent) received() *http.Request {
	req := httptest.NewRequest(s.method, s.target, bytes.NewReader(s.body))
	req.Header = s.header.Clone()
	return req
}

// check is the receiver's whole check: form, signature, time and nonce,
// then the body.
func check(v *Verifier, s sent, now time.Time) error {
	signed, err := Parse(testPurpose, s.received())
	if err != nil {
		return err
	}
	if err := v.Verify(signed, testKey, now); err != nil {
		return err
	}
	return signed.CheckBody(s.body)
}

func TestDeriveKeySeparatesPurposes(t *testing.T) {
	parent := []byte("a parent key of sixteen bytes or more")
	a, b := DeriveKey(parent, "purpose a"), DeriveKey(parent, "purpose b")
	require.Len(t, a, 32)
	require.NotEqual(t, a, b)
	require.Equal(t, a, DeriveKey(parent, "purpose a"))
	require.NotEqual(t, a, DeriveKey([]byte("another parent key, as long"), "purpose a"))
}

func TestSignedRequestRoundTrip(t *testing.T) {
	now := time.Now()
	body := []byte(`{"attempt":2}`)
	s := sign(t, testKey, testPurpose, "/x/register?task=worker:0", body, now)
	signed, err := Parse(testPurpose, s.received())
	require.NoError(t, err)
	require.Equal(t, testSigner, signed.Signer)
	require.Equal(t, "/x/register?task=worker:0", signed.Target)
	require.Equal(t, now.UnixMilli(), signed.At.UnixMilli())
	require.Equal(t, s.header.Get(HeaderSignature), signed.Signature)
	require.NoError(t, NewVerifier(time.Minute, 8).Verify(signed, testKey, now))
	require.NoError(t, signed.CheckBody(body))
	require.NoError(t, check(NewVerifier(time.Minute, 8), sign(t, testKey, testPurpose, "/x", nil, now), now), "no body")
}

// Every way a request can be forged, altered, replayed or mistimed is
// refused, each for its reason.
func TestVerifyRefuses(t *testing.T) {
	now := time.Now()
	body := []byte(`{"attempt":2,"am":"node2:1"}`)
	good := func() sent { return sign(t, testKey, testPurpose, "/x/announce", body, now) }
	altered := func(f func(*sent)) sent { s := good(); s.header = s.header.Clone(); f(&s); return s }
	cases := []struct {
		name string
		req  sent
		want string
	}{
		{"wrong key", sign(t, DeriveKey(testKey, "another"), testPurpose, "/x/announce", body, now), "bad signature"},
		{"wrong purpose", sign(t, testKey, "tfyarn-test-v1 response", "/x/announce", body, now), "bad signature"},
		{"altered path", altered(func(s *sent) { s.target = "/x/exit" }), "bad signature"},
		{"altered query", altered(func(s *sent) { s.target += "?task=chief:0" }), "bad signature"},
		{"altered method", altered(func(s *sent) { s.method = http.MethodPut }), "bad signature"},
		{"altered body", altered(func(s *sent) { s.body = []byte(`{"attempt":9,"am":"evil:1"}`) }), "does not match its signed digest"},
		{"altered digest", altered(func(s *sent) { s.header.Set(HeaderContentSHA256, Digest([]byte("other"))) }), "bad signature"},
		{"another signer", altered(func(s *sent) { s.header.Set(HeaderSigner, "container_1_0001_01_000003") }), "bad signature"},
		{"altered nonce", altered(func(s *sent) { s.header.Set(HeaderNonce, strings.Repeat("00", nonceBytes)) }), "bad signature"},
		{"altered timestamp", altered(func(s *sent) { s.header.Set(HeaderTimestamp, "1") }), "bad signature"},
		{"stale timestamp", sign(t, testKey, testPurpose, "/x/announce", body, now.Add(-2*time.Minute)), "timestamp off"},
		{"future timestamp", sign(t, testKey, testPurpose, "/x/announce", body, now.Add(2*time.Minute)), "timestamp off"},
		{"unsigned", sent{method: http.MethodPost, target: "/x/announce", header: http.Header{}, body: body}, "unsigned request"},
		{"no signature", altered(func(s *sent) { s.header.Del(HeaderSignature) }), "unsigned request"},
		{"malformed signer", altered(func(s *sent) { s.header.Set(HeaderSigner, "container 1") }), "malformed container id"},
		{"signer too long", altered(func(s *sent) { s.header.Set(HeaderSigner, strings.Repeat("c", maxSignerLen+1)) }), "malformed container id"},
		{"malformed nonce", altered(func(s *sent) { s.header.Set(HeaderNonce, "zz") }), "malformed nonce"},
		{"malformed timestamp", altered(func(s *sent) { s.header.Set(HeaderTimestamp, "soon") }), "malformed timestamp"},
		{"malformed digest", altered(func(s *sent) { s.header.Set(HeaderContentSHA256, "00") }), "malformed content digest"},
		{"malformed signature", altered(func(s *sent) { s.header.Set(HeaderSignature, "not hex") }), "malformed signature"},
		{"short signature", altered(func(s *sent) { s.header.Set(HeaderSignature, "0011") }), "malformed signature"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.ErrorContains(t, check(NewVerifier(time.Minute, 8), c.req, now), c.want)
		})
	}
	require.NoError(t, check(NewVerifier(time.Minute, 8), good(), now.Add(59*time.Second)), "inside the window")
	require.ErrorContains(t, NewVerifier(time.Minute, 8).Verify(Signed{}, testKey, now), "bad signature", "a Signed that Parse did not make")
}

func TestReplayedNonceRefused(t *testing.T) {
	now := time.Now()
	v := NewVerifier(time.Minute, 8)
	s := sign(t, testKey, testPurpose, "/x", nil, now)
	require.NoError(t, check(v, s, now))
	require.ErrorIs(t, check(v, s, now.Add(time.Second)), ErrReplay)
	// A forged request never takes a place: it cannot spend a nonce.
	v2 := NewVerifier(time.Minute, 8)
	forged := sign(t, []byte("a guess"), testPurpose, "/x", nil, now)
	forged.header.Set(HeaderNonce, s.header.Get(HeaderNonce))
	require.ErrorContains(t, check(v2, forged, now), "bad signature")
	require.NoError(t, check(v2, s, now), "the genuine request after a forgery with its nonce")
}

func TestReplayCacheFullRefusesUntilTheWindowPasses(t *testing.T) {
	now := time.Now()
	v := NewVerifier(time.Minute, 2)
	require.NoError(t, check(v, sign(t, testKey, testPurpose, "/x", nil, now), now))
	require.NoError(t, check(v, sign(t, testKey, testPurpose, "/x", nil, now), now))
	require.ErrorIs(t, check(v, sign(t, testKey, testPurpose, "/x", nil, now), now), ErrCacheFull)
	// Once the window has passed, old nonces are forgotten (the timestamp
	// check refuses their requests by then) and room frees up.
	later := now.Add(2*time.Minute + 2*time.Second)
	require.NoError(t, check(v, sign(t, testKey, testPurpose, "/x", nil, later), later))
}

func TestResponseSignature(t *testing.T) {
	body := []byte(`{"cluster":{}}`)
	h := http.Header{}
	h.Set(HeaderSignature, SignResponse(testKey, testPurpose, "s1", 200, body))
	require.NoError(t, CheckResponse(testKey, testPurpose, "s1", 200, h, body))
	cases := []struct {
		name                string
		key                 []byte
		purpose, requestSig string
		status              int
		body                []byte
	}{
		{"wrong key", DeriveKey(testKey, "x"), testPurpose, "s1", 200, body},
		{"wrong purpose", testKey, "another purpose", "s1", 200, body},
		{"another request", testKey, testPurpose, "s2", 200, body},
		{"another status", testKey, testPurpose, "s1", 204, body},
		{"another body", testKey, testPurpose, "s1", 200, append(body[:len(body):len(body)], ' ')},
	}
	for _, c := range cases {
		require.ErrorIs(t, CheckResponse(c.key, c.purpose, c.requestSig, c.status, h, c.body), ErrBadResponseSignature, c.name)
	}
	require.ErrorIs(t, CheckResponse(testKey, testPurpose, "s1", 200, http.Header{}, body), ErrUnsignedResponse)
	h.Set(HeaderSignature, "00")
	require.ErrorIs(t, CheckResponse(testKey, testPurpose, "s1", 200, h, body), ErrUnsignedResponse)
}

// FuzzParse: whatever signature headers arrive, Parse either refuses them
// or returns fields of the form it promises, and Verify never accepts a
// request that was not signed with the key.
func FuzzParse(f *testing.F) {
	now := time.UnixMilli(1_800_000_000_000)
	good := sign(f, testKey, testPurpose, "/x", []byte("{}"), now)
	h := good.header
	f.Add(h.Get(HeaderSigner), h.Get(HeaderTimestamp), h.Get(HeaderNonce), h.Get(HeaderContentSHA256), h.Get(HeaderSignature))
	f.Add("c", "-1", strings.Repeat("0", 32), strings.Repeat("0", 64), strings.Repeat("0", 64))
	f.Add("c\n", "99999999999999999", "zz", "", "")
	f.Fuzz(func(t *testing.T, signer, ts, nonce, digest, sig string) {
		req := httptest.NewRequest(http.MethodPost, "/x", nil)
		for name, v := range map[string]string{HeaderSigner: signer, HeaderTimestamp: ts, HeaderNonce: nonce, HeaderContentSHA256: digest, HeaderSignature: sig} {
			req.Header[name] = []string{v}
		}
		s, err := Parse(testPurpose, req)
		if err != nil {
			return
		}
		if !validSigner(s.Signer) || !isHexOf(s.Nonce, nonceBytes) || !isHexOf(s.Digest, 32) || len(s.received) != 32 {
			t.Fatalf("parsed a malformed request: %+v", s)
		}
		for _, field := range []string{s.Signer, s.Timestamp, s.Nonce, s.Digest} {
			if strings.ContainsAny(field, "\n\r") {
				t.Fatalf("a newline in a signed field: %q", field)
			}
		}
		err = NewVerifier(time.Hour, 8).Verify(s, testKey, now)
		if err == nil && !strings.EqualFold(sig, Request{Purpose: testPurpose, Method: http.MethodPost, Target: "/x",
			Signer: signer, Timestamp: ts, Nonce: nonce, Digest: digest}.signature(testKey)) {
			t.Fatalf("accepted a signature not made with the key: %+v", s)
		}
	})
}
