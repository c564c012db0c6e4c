package ipc

import (
	"bytes"
	"context"
	"crypto/md5"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/security"
)

// rfcSession is a session for RFC 2831 §4's examples, where the username is
// "chris" and the password "secret" rather than base64 token material.
func rfcSession(uri, cnonce string) *digestSession {
	return &digestSession{
		username: "chris", password: "secret", digestURI: uri,
		qops: []string{qopAuthConf, qopAuthInt, qopAuth}, ciphers: defaultCiphers,
		recvMaxBuf: defaultMaxBuf,
		cnonceFn:   func() (string, error) { return cnonce, nil },
	}
}

func TestDigestRFC2831Examples(t *testing.T) {
	for _, tc := range []struct {
		name, challenge, uri, cnonce, response, rspauth string
	}{
		{
			name:      "imap",
			challenge: `realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8`,
			uri:       "imap/elwood.innosoft.com", cnonce: "OA6MHXh6VqTrRk",
			response: "d388dad90d4bbd760a152321f2143af7", rspauth: "ea40f60335c427b5527b84dbabcdfffd",
		},
		{
			name:      "acap",
			challenge: `realm="elwood.innosoft.com",nonce="OA9BSXrbuRhWay",qop="auth",algorithm=md5-sess,charset=utf-8`,
			uri:       "acap/elwood.innosoft.com", cnonce: "OA9BSuZWMSpW8m",
			response: "6084c6db3fede7352c551284490fd0fc", rspauth: "2f0b3d7c3c2e486600ef710726aa2eae",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := rfcSession(tc.uri, tc.cnonce)
			resp, err := s.Step([]byte(tc.challenge))
			require.NoError(t, err)
			require.Equal(t, `charset=utf-8,username="chris",realm="elwood.innosoft.com",nonce="`+
				strings.Split(strings.Split(tc.challenge, `nonce="`)[1], `"`)[0]+`",nc=00000001,cnonce="`+tc.cnonce+
				`",digest-uri="`+tc.uri+`",maxbuf=65536,response=`+tc.response+`,qop=auth`, string(resp))
			require.False(t, s.Complete())

			out, err := s.Step([]byte("rspauth=" + tc.rspauth))
			require.NoError(t, err)
			require.Nil(t, out)
			require.True(t, s.Complete())
			require.Nil(t, s.Wrapper(), "qop auth has no security layer")
		})
	}
}

func TestDigestWrongRspauth(t *testing.T) {
	s := rfcSession("imap/elwood.innosoft.com", "OA6MHXh6VqTrRk")
	_, err := s.Step([]byte(`realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8`))
	require.NoError(t, err)
	_, err = s.Step([]byte("rspauth=ea40f60335c427b5527b84dbabcdfffe"))
	require.ErrorContains(t, err, "rspauth does not match")
	require.False(t, s.Complete())

	s = rfcSession("imap/elwood.innosoft.com", "OA6MHXh6VqTrRk")
	_, err = s.Step([]byte(`realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess`))
	require.NoError(t, err)
	_, err = s.Step([]byte(`qop=auth`))
	require.ErrorContains(t, err, "no rspauth")
}

func TestDigestChallengeErrors(t *testing.T) {
	for name, ch := range map[string]string{
		"algorithm": `nonce="n",qop="auth",algorithm=md5`,
		"nonce":     `qop="auth",algorithm=md5-sess`,
		"charset":   `nonce="n",charset=latin1,algorithm=md5-sess`,
		"qop":       `nonce="n",qop="auth-int",algorithm=md5-sess`,
		"cipher":    `nonce="n",qop="auth-conf",cipher="des,rc4-40",algorithm=md5-sess`,
		"quote":     `nonce="n,algorithm=md5-sess`,
		"dup":       `nonce="n",nonce="m",algorithm=md5-sess`,
		"maxbuf":    `nonce="n",maxbuf=x,algorithm=md5-sess`,
	} {
		t.Run(name, func(t *testing.T) {
			s := rfcSession("/default", "c")
			if name == "qop" {
				s.qops = []string{qopAuth}
			}
			if name == "cipher" {
				s.qops = []string{qopAuthConf}
			}
			_, err := s.Step([]byte(ch))
			require.Error(t, err)
			require.ErrorIs(t, err, errDigest)
		})
	}
}

func TestParseDirectives(t *testing.T) {
	d, err := parseDirectives([]byte(` realm="a\"b" , realm=second,, nonce = "x y",qop=auth-conf ,cipher="3des,rc4"`))
	require.NoError(t, err)
	require.Equal(t, []string{`a"b`, "second"}, d["realm"])
	require.Equal(t, "x y", d.one("nonce"))
	require.Equal(t, "auth-conf", d.one("qop"))
	require.Equal(t, []string{"3des", "rc4"}, splitList(d.one("cipher")))
	require.Equal(t, `a\"b`, quote(`a"b`))
}

func TestDigestQOPAndCipherChoice(t *testing.T) {
	q, err := qopPreference([]string{"authentication", "privacy"})
	require.NoError(t, err)
	require.Equal(t, []string{qopAuthConf, qopAuth}, q, "strongest first, whatever the configured order")
	_, err = qopPreference([]string{"secret"})
	require.Error(t, err)

	for _, tc := range []struct {
		prot           []string
		ciphers        []string
		offered        string
		qop, chosenCip string
	}{
		{nil, nil, "auth", qopAuth, ""},
		{nil, nil, "auth,auth-int,auth-conf", qopAuthConf, "rc4"},
		{[]string{"integrity", "authentication"}, nil, "auth,auth-int,auth-conf", qopAuthInt, ""},
		{[]string{"privacy"}, []string{"3des"}, "auth-conf", qopAuthConf, "3des"},
		{[]string{"privacy"}, []string{"rc4-40", "rc4"}, "auth-conf", qopAuthConf, "rc4-40"},
	} {
		d := &DigestMD5{Tokens: []security.Token{testToken()}, Protection: tc.prot, Ciphers: tc.ciphers}
		sess, err := d.Start(context.Background(), SaslOffer{ServerID: "default"})
		require.NoError(t, err)
		s := sess.(*digestSession)
		require.NoError(t, s.chooseQOP(tc.offered, javaCiphers))
		require.Equal(t, tc.qop, s.qop, "%+v", tc)
		require.Equal(t, tc.chosenCip, s.cipher, "%+v", tc)
	}
}

func testToken() security.Token {
	return security.Token{
		Identifier: []byte("\x00\x01identifier bytes\xff"),
		Password:   []byte("\x10password\x00bytes"),
		Kind:       security.KindAMRMToken,
		Service:    "127.0.0.1:8030",
	}
}

func TestDigestTokenSelection(t *testing.T) {
	amrm := testToken()
	nm1 := security.Token{Identifier: []byte("n1"), Password: []byte("p"), Kind: security.KindNMToken, Service: "host1:45454"}
	nm2 := security.Token{Identifier: []byte("n2"), Password: []byte("p"), Kind: security.KindNMToken, Service: "host2:45454"}

	pick := func(d *DigestMD5) (string, error) {
		sess, err := d.Start(context.Background(), SaslOffer{ServerID: "default"})
		if err != nil {
			return "", err
		}
		return sess.(*digestSession).username, nil
	}
	// The single token of the kind, whatever its service says.
	u, err := pick(&DigestMD5{Tokens: []security.Token{nm1, amrm}, Kind: security.KindAMRMToken, Services: []string{"localhost:8030"}})
	require.NoError(t, err)
	require.Equal(t, base64Std(amrm.Identifier), u)
	// Several of the kind: the service decides.
	u, err = pick(&DigestMD5{Tokens: []security.Token{nm1, nm2}, Kind: security.KindNMToken, Services: []string{"host2:45454"}})
	require.NoError(t, err)
	require.Equal(t, base64Std(nm2.Identifier), u)
	// Ambiguous: an error naming services, not a guess.
	_, err = pick(&DigestMD5{Tokens: []security.Token{nm1, nm2}, Kind: security.KindNMToken, Services: []string{"host3:45454"}})
	require.ErrorContains(t, err, "host1:45454")
	require.NotErrorIs(t, err, ErrNoCredentials)
	// None of the kind: the next SASL offer may be tried.
	_, err = pick(&DigestMD5{Tokens: []security.Token{nm1}, Kind: security.KindAMRMToken})
	require.ErrorIs(t, err, ErrNoCredentials)
	_, err = pick(TokenAuth())
	require.ErrorIs(t, err, ErrNoCredentials)
	// The error never shows the token's secrets.
	require.NotContains(t, err.Error(), base64Std(amrm.Password))
}

// handshake runs client and test server against each other in memory.
func handshake(t *testing.T, d *DigestMD5, srv *digestServer) (client, server SaslWrapper) {
	t.Helper()
	sess, err := d.Start(context.Background(), SaslOffer{Method: MethodToken, Mechanism: MechDigestMD5, ServerID: "default"})
	require.NoError(t, err)
	resp, err := sess.Step(srv.challenge())
	require.NoError(t, err)
	final, layer, err := srv.check(resp, "/default")
	require.NoError(t, err)
	out, err := sess.Step(final)
	require.NoError(t, err)
	require.Nil(t, out)
	require.True(t, sess.Complete())
	return sess.Wrapper(), layer
}

func TestDigestSecurityLayers(t *testing.T) {
	for _, tc := range []struct {
		qops, cipher string
		maxWrap      int
	}{
		{"auth-int", "", 65536 - 16},
		{"auth-conf", "rc4", 65536 - 26},
		{"auth-conf", "3des", 65536 - 26},
		{"auth-conf", "des", 65536 - 26},
		{"auth-conf", "rc4-56", 65536 - 26},
		{"auth-conf", "rc4-40", 65536 - 26},
	} {
		t.Run(tc.qops+"/"+tc.cipher, func(t *testing.T) {
			var ciphers []string
			if tc.cipher != "" {
				ciphers = []string{tc.cipher}
			}
			d := &DigestMD5{Tokens: []security.Token{testToken()}, Ciphers: ciphers}
			srv := &digestServer{token: testToken(), qops: tc.qops}
			cw, sw := handshake(t, d, srv)
			require.NotNil(t, cw)
			require.Equal(t, tc.qops, srv.qop)
			require.Equal(t, tc.cipher, srv.cipher)
			require.Equal(t, tc.maxWrap, cw.MaxWrapSize())

			// Many messages each way, of every length around the block size,
			// so padding, sequence numbers and cross-message CBC state are used.
			for i := range 40 {
				msg := bytes.Repeat([]byte{byte(i)}, i*7)
				msg = append(msg, "payload"...)
				w, err := cw.Wrap(msg)
				require.NoError(t, err)
				if tc.cipher != "" {
					require.NotContains(t, string(w), "payload", "auth-conf encrypts")
				}
				got, err := sw.Unwrap(w)
				require.NoError(t, err)
				require.Equal(t, msg, got)

				w, err = sw.Wrap(msg)
				require.NoError(t, err)
				got, err = cw.Unwrap(w)
				require.NoError(t, err)
				require.Equal(t, msg, got)
			}
			// A full-size piece fits the peer's 64 KiB buffer once wrapped.
			big := bytes.Repeat([]byte("x"), cw.MaxWrapSize())
			w, err := cw.Wrap(big)
			require.NoError(t, err)
			require.LessOrEqual(t, len(w), 65536)
			_, err = sw.Unwrap(w)
			require.NoError(t, err)
			_, err = cw.Wrap(append(big, 'y'))
			require.Error(t, err, "over the peer's buffer")

			// Tampering anywhere is detected.
			w, err = sw.Wrap([]byte("integrity matters"))
			require.NoError(t, err)
			w[3] ^= 0x40
			_, err = cw.Unwrap(w)
			require.ErrorIs(t, err, errDigest)
		})
	}
}

func TestDigestSequenceNumbers(t *testing.T) {
	for _, qop := range []string{"auth-int", "auth-conf"} {
		t.Run(qop, func(t *testing.T) {
			cw, sw := handshake(t, TokenAuth(testToken()), &digestServer{token: testToken(), qops: qop})
			w0, err := cw.Wrap([]byte("first"))
			require.NoError(t, err)
			w1, err := cw.Wrap([]byte("second"))
			require.NoError(t, err)
			require.Equal(t, []byte{0, 1, 0, 0, 0, 0}, w0[len(w0)-6:], "type 1, seq 0")
			require.Equal(t, []byte{0, 1, 0, 0, 0, 1}, w1[len(w1)-6:], "type 1, seq 1")
			if qop == "auth-int" {
				// Out of order: a replayed or reordered message is refused.
				_, err = sw.Unwrap(w1)
				require.ErrorContains(t, err, "out of sequence")
			}
			got, err := sw.Unwrap(w0)
			require.NoError(t, err)
			require.Equal(t, "first", string(got))
			_, err = sw.Unwrap(w0)
			require.Error(t, err, "replay")
		})
	}
}

func TestDesParityKey(t *testing.T) {
	// 56 one-bits spread over 8 bytes: 0xfe has 7 bits set (odd), so no parity bit.
	require.Equal(t, bytes.Repeat([]byte{0xfe}, 8), desParityKey(bytes.Repeat([]byte{0xff}, 7)))
	// All zero: each byte gets the parity bit.
	require.Equal(t, bytes.Repeat([]byte{0x01}, 8), desParityKey(make([]byte, 7)))
	// 0x80 00.. : the top bit lands in the top bit of byte 0.
	require.Equal(t, []byte{0x80, 1, 1, 1, 1, 1, 1, 1}, desParityKey([]byte{0x80, 0, 0, 0, 0, 0, 0}))
}

// TestDigestOverIPC runs a full client against the fake server with a real
// DIGEST-MD5 server side: negotiation, context, wrapped calls spanning
// several WRAP pieces.
func TestDigestOverIPC(t *testing.T) {
	for _, tc := range []struct{ qops, cipher string }{{"auth", ""}, {"auth-int", ""}, {"auth-conf", "rc4"}, {"auth-conf", "3des"}} {
		t.Run(tc.qops+"/"+tc.cipher, func(t *testing.T) {
			srv := newFakeServer(t, echo)
			ds := &digestServer{token: testToken(), qops: tc.qops, maxBuf: 4096}
			srv.sasl = ds.saslServer(t)
			var gotQOP, gotCipher string
			d := &DigestMD5{Tokens: []security.Token{testToken()}, OnComplete: func(q, c string) { gotQOP, gotCipher = q, c }}
			if tc.cipher != "" {
				d.Ciphers = []string{tc.cipher}
			}
			c := newTestClient(t, Config{SASL: []SaslMechanism{d}, RequireSASL: true}, srv.addr)
			big := strings.Repeat("wrapped payload ", 2000) // 32 KB: several 4 KiB pieces
			for _, in := range []string{"a", big, "b"} {
				got, err := callString(context.Background(), c, "m", in)
				require.NoError(t, err)
				require.Equal(t, in, got)
			}
			require.Equal(t, tc.qops, gotQOP)
			require.Equal(t, tc.cipher, gotCipher)
			require.Nil(t, srv.contexts[0].GetUserInfo(), "token auth sends no user")
		})
	}
}

func TestDigestOverIPCWrongPassword(t *testing.T) {
	srv := newFakeServer(t, echo)
	srv.sasl = (&digestServer{token: testToken(), qops: "auth"}).saslServer(t)
	bad := testToken()
	bad.Password = []byte("wrong")
	c := newTestClient(t, Config{SASL: []SaslMechanism{TokenAuth(bad)}}, srv.addr)
	_, err := callString(context.Background(), c, "m", "x")
	require.Error(t, err)
	require.True(t, IsClass(err, "SaslException"), "%v", err)
	require.ErrorContains(t, err, "Mismatched response")
}

func TestDigestOverIPCRogueServer(t *testing.T) {
	srv := newFakeServer(t, echo)
	srv.sasl = (&digestServer{token: testToken(), qops: "auth", badRspauth: true}).saslServer(t)
	c := newTestClient(t, Config{SASL: []SaslMechanism{TokenAuth(testToken())}}, srv.addr)
	_, err := callString(context.Background(), c, "m", "x")
	require.ErrorContains(t, err, "rspauth does not match")
	require.Equal(t, 0, len(srv.gotCalls()))
}

func TestDigestLayerKeysDiffer(t *testing.T) {
	// Client and server keys must differ per direction, or a reflected
	// message would verify.
	var hA1 [md5.Size]byte
	cl, err := newDigestLayer(hA1, qopAuthConf, "rc4", defaultMaxBuf, true)
	require.NoError(t, err)
	w, err := cl.Wrap([]byte("reflect me"))
	require.NoError(t, err)
	_, err = cl.Unwrap(w)
	require.Error(t, err)
}
