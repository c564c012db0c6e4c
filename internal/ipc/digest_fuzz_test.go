package ipc

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/security"
)

// fuzzCnonce pins the client nonce so that keys, and thus the seeds' real
// Wrap outputs, are the same in every run.
const fuzzCnonce = "ZnV6ei1jbGllbnQtbm9uY2UtZm9yLXNlZWRz"

// fuzzDigestSession accepts every QOP and every cipher, so that whatever
// the challenge offers reaches the furthest code.
func fuzzDigestSession() *digestSession {
	return &digestSession{
		username: "chris", password: "secret", digestURI: "imap/elwood.innosoft.com",
		qops:       []string{qopAuthConf, qopAuthInt, qopAuth},
		ciphers:    []string{"rc4", "3des", "des", "rc4-56", "rc4-40"},
		recvMaxBuf: defaultMaxBuf,
		cnonceFn:   func() (string, error) { return fuzzCnonce, nil },
	}
}

// FuzzDigestChallenge hands arbitrary bytes to the client as the server's
// digest-challenge. It must fail with errDigest, or answer with a
// well-formed digest-response: one that parses, echoes the nonce and realm
// it was given, names a QOP (and cipher) both sides accept, carries the
// response value RFC 2831 prescribes, and is bounded by the challenge's
// size. A server that then proves the password gets a working layer.
func FuzzDigestChallenge(f *testing.F) {
	// RFC 2831 §4's challenges (digest_test.go) and the in-process Java-like
	// server's (digest_server_test.go) for every protection level.
	f.Add([]byte(`realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8`))
	f.Add([]byte(`realm="elwood.innosoft.com",nonce="OA9BSXrbuRhWay",qop="auth",algorithm=md5-sess,charset=utf-8`))
	for _, qops := range []string{"auth", "auth-int", "auth-conf", "auth,auth-int,auth-conf"} {
		f.Add((&digestServer{token: testToken(), qops: qops}).challenge())
		f.Add((&digestServer{token: testToken(), qops: qops, maxBuf: 4096, ciphers: "rc4-40"}).challenge())
	}
	// TestParseDirectives' and TestDigestChallengeErrors' awkward inputs.
	f.Add([]byte(` realm="a\"b" , realm=second,, nonce = "x y",qop=auth-conf ,cipher="3des,rc4",algorithm=md5-sess`))
	f.Add([]byte(`nonce="n,algorithm=md5-sess`))
	f.Add([]byte(`nonce="n",nonce="m",algorithm=md5-sess`))
	f.Add([]byte(`nonce="n",maxbuf=27,algorithm=md5-sess,qop=auth-int`))
	f.Add([]byte(`nonce="n\\\"\x01",realm="r\x7f",algorithm=md5-sess,qop="auth-conf",cipher=des`))

	f.Fuzz(func(t *testing.T, challenge []byte) {
		s := fuzzDigestSession()
		resp, err := s.Step(challenge)
		if err != nil {
			if !errors.Is(err, errDigest) {
				t.Fatalf("error %v does not wrap errDigest", err)
			}
			if s.Complete() || s.Wrapper() != nil {
				t.Fatal("a refused challenge left a completed session")
			}
			if _, err := s.Step([]byte("rspauth=0")); err == nil {
				t.Fatal("the exchange went on after a refused challenge")
			}
			return
		}
		if len(challenge) == 0 {
			if len(resp) != 0 {
				t.Fatalf("answered an empty challenge with %q", resp)
			}
			return
		}
		if len(resp) > 2*len(challenge)+512 {
			t.Fatalf("response of %d bytes to a %d-byte challenge", len(resp), len(challenge))
		}
		ch, err := parseDirectives(challenge)
		if err != nil {
			t.Fatalf("accepted a challenge parseDirectives refuses: %v", err)
		}
		d, err := parseDirectives(resp)
		if err != nil {
			t.Fatalf("response %q does not parse: %v", resp, err)
		}
		nonce, realm := ch.one("nonce"), ch.one("realm")
		if nonce == "" || ch.one("algorithm") != "md5-sess" {
			t.Fatalf("accepted challenge without nonce or md5-sess: %q", challenge)
		}
		// quote() re-encodes runes, so only valid UTF-8 survives byte for byte.
		if utf8.ValidString(nonce) && d.one("nonce") != nonce {
			t.Fatalf("nonce %q came back as %q", nonce, d.one("nonce"))
		}
		if utf8.ValidString(realm) && d.one("realm") != realm {
			t.Fatalf("realm %q came back as %q", realm, d.one("realm"))
		}
		if d.one("username") != "chris" || d.one("nc") != nonceCount || d.one("cnonce") != fuzzCnonce ||
			d.one("digest-uri") != s.digestURI || d.one("maxbuf") != strconv.Itoa(defaultMaxBuf) {
			t.Fatalf("response %q lost a fixed directive", resp)
		}
		qop := d.one("qop")
		offered := splitList(ch.one("qop"))
		if len(offered) == 0 {
			offered = []string{qopAuth}
		}
		if !slices.Contains(s.qops, qop) || !slices.Contains(offered, qop) {
			t.Fatalf("qop %q: offered %q", qop, offered)
		}
		cipher, hasCipher := d.get("cipher")
		if (qop == qopAuthConf) != hasCipher {
			t.Fatalf("qop %q with cipher %q (%v)", qop, cipher, hasCipher)
		}
		if hasCipher && (!slices.Contains(s.ciphers, cipher) || !slices.Contains(splitList(ch.one("cipher")), cipher)) {
			t.Fatalf("cipher %q: offered %q", cipher, ch.one("cipher"))
		}
		if strings.Contains(string(resp), "secret") {
			t.Fatal("the password is in the response")
		}
		// What a server knowing the password computes from the response.
		hA1 := sessionKey("chris", s.realm, "secret", nonce, fuzzCnonce)
		if d.one("response") != responseValue(hA1, "AUTHENTICATE", s.digestURI, qop, nonce, fuzzCnonce) {
			t.Fatalf("response value %q is not RFC 2831's", d.one("response"))
		}
		out, err := s.Step([]byte("rspauth=" + responseValue(hA1, "", s.digestURI, qop, nonce, fuzzCnonce)))
		if err != nil || out != nil || !s.Complete() {
			t.Fatalf("a server proving the password was refused: %v", err)
		}
		if qop == qopAuth {
			if s.Wrapper() != nil {
				t.Fatal("qop auth with a security layer")
			}
			return
		}
		peer, err := newDigestLayer(hA1, qop, cipher, defaultMaxBuf, false)
		if err != nil {
			t.Fatal(err)
		}
		msg := []byte("after a fuzzed challenge")
		msg = msg[:min(len(msg), s.Wrapper().MaxWrapSize())] // maxbuf may be tiny
		w, err := s.Wrapper().Wrap(msg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := peer.Unwrap(w)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("layer round trip: %q, %v", got, err)
		}
	})
}

// fuzzLayers are the security layers FuzzDigestUnwrap attacks, picked by
// the low bits of its mode byte.
var fuzzLayers = []struct{ qop, cipher string }{
	{qopAuthInt, ""},
	{qopAuthConf, "rc4"},
	{qopAuthConf, "3des"},
	{qopAuthConf, "des"},
}

// fuzzWrapped is what the peer really wraps, in this order.
var fuzzWrapped = [][]byte{
	[]byte("first message"),
	bytes.Repeat([]byte{0x42}, 23), // 23+10 = 33: padding of 7 under CBC
	[]byte("x"),
	[]byte("\x00\x01fourth, one full block of pad"),
}

// digestPair negotiates, with the in-process DIGEST-MD5 server and the
// pinned client nonce, the layers both ends use (as handshake does), so
// that keys and thus every Wrap output are reproducible.
func digestPair(tb testing.TB, qop, cipher string) (client, server SaslWrapper) {
	d := &DigestMD5{Tokens: []security.Token{testToken()}, cnonce: func() (string, error) { return fuzzCnonce, nil }}
	if cipher != "" {
		d.Ciphers = []string{cipher}
	}
	srv := &digestServer{token: testToken(), qops: qop}
	sess, err := d.Start(context.Background(), SaslOffer{Method: MethodToken, Mechanism: MechDigestMD5, ServerID: "default"})
	require.NoError(tb, err)
	resp, err := sess.Step(srv.challenge())
	require.NoError(tb, err)
	final, layer, err := srv.check(resp, "/default")
	require.NoError(tb, err)
	_, err = sess.Step(final)
	require.NoError(tb, err)
	require.True(tb, sess.Complete())
	require.Equal(tb, qop, srv.qop)
	require.Equal(tb, cipher, srv.cipher)
	return sess.Wrapper(), layer
}

// fuzzUnwrapSetup decodes the mode byte: which layer, which direction, and
// how many of the peer's real messages arrive before the fuzzed one.
func fuzzUnwrapSetup(tb testing.TB, mode uint8) (sender, receiver SaslWrapper, wrapped [][]byte, k int) {
	l := fuzzLayers[mode&3]
	cw, sw := digestPair(tb, l.qop, l.cipher)
	sender, receiver = cw, sw
	if mode&4 != 0 {
		sender, receiver = sw, cw
	}
	for _, p := range fuzzWrapped {
		w, err := sender.Wrap(p)
		require.NoError(tb, err)
		wrapped = append(wrapped, w)
	}
	return sender, receiver, wrapped, int(mode>>3) % (len(fuzzWrapped) - 1)
}

// FuzzDigestUnwrap feeds arbitrary bytes to the auth-int and auth-conf
// (rc4, 3des, des) Unwrap after k real messages from the peer. Unwrap must
// fail, or return exactly the plaintext of the message the peer really
// wrapped next, from exactly those bytes: a mutated or forged message is
// never accepted, with any plaintext. After an acceptance the stream goes
// on: the peer's following message unwraps too.
func FuzzDigestUnwrap(f *testing.F) {
	for mode := range 32 {
		_, _, wrapped, k := fuzzUnwrapSetup(f, uint8(mode))
		w := wrapped[k]
		f.Add(uint8(mode), w)
		if mode < 8 {
			m := bytes.Clone(w)
			m[0] ^= 1
			f.Add(uint8(mode), m)                  // tampered body
			f.Add(uint8(mode), wrapped[k+1])       // out of order
			f.Add(uint8(mode), w[:len(w)-1])       // truncated
			f.Add(uint8(mode), append(w[:0:0], 1)) // too short
		}
	}
	f.Fuzz(func(t *testing.T, mode uint8, data []byte) {
		_, receiver, wrapped, k := fuzzUnwrapSetup(t, mode)
		for i := range k {
			got, err := receiver.Unwrap(wrapped[i])
			if err != nil || !bytes.Equal(got, fuzzWrapped[i]) {
				t.Fatalf("real message %d: %q, %v", i, got, err)
			}
		}
		got, err := receiver.Unwrap(data)
		if err != nil {
			if !errors.Is(err, errDigest) {
				t.Fatalf("error %v does not wrap errDigest", err)
			}
			return
		}
		if len(data) == 0 {
			if len(got) != 0 {
				t.Fatalf("empty input unwrapped to %q", got)
			}
			return // nothing consumed: Wrap of nothing is nothing
		}
		if !bytes.Equal(data, wrapped[k]) || !bytes.Equal(got, fuzzWrapped[k]) {
			t.Fatalf("accepted %x as %q; the peer's message %d is %x (%q)", data, got, k, wrapped[k], fuzzWrapped[k])
		}
		got, err = receiver.Unwrap(wrapped[k+1])
		if err != nil || !bytes.Equal(got, fuzzWrapped[k+1]) {
			t.Fatalf("message %d after an accepted one: %q, %v", k+1, got, err)
		}
	})
}
