package ipc

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

const (
	defaultMaxBuf = 65536 // Java's DigestMD5Base.DEFAULT_MAXBUF
	// Java refuses longer challenges; a bound keeps a hostile server from
	// making us parse megabytes.
	maxChallengeLen = 2048
	// securityLayerMarker ends A2 when a security layer is negotiated.
	securityLayerMarker = ":00000000000000000000000000000000"
	// nonceCount is always 1: Hadoop never reuses a nonce (no subsequent auth).
	nonceCount = "00000001"
)

// digestSession is one client-side RFC 2831 exchange: the digest-challenge
// is answered with a digest-response, then the server's rspauth is checked.
type digestSession struct {
	username, password string // base64 of the token's identifier and password
	digestURI          string
	qops               []string // acceptable, strongest first
	ciphers            []string // acceptable, preferred first
	recvMaxBuf         int
	cnonceFn           func() (string, error)
	onComplete         func(qop, cipher string)

	step   int // 0: awaiting challenge, 1: awaiting rspauth, 2: done
	realm  string
	nonce  string
	cnonce string
	qop    string
	cipher string
	// sendMaxBuf is the server's announced receive buffer.
	sendMaxBuf int
	hA1        [md5.Size]byte
	layer      SaslWrapper
	verified   bool
}

func (s *digestSession) Step(challenge []byte) ([]byte, error) {
	switch s.step {
	case 0:
		if len(challenge) == 0 {
			// The server offered no initial challenge: DIGEST-MD5 has no
			// initial response, so send nothing and wait for one.
			return []byte{}, nil
		}
		resp, err := s.respond(challenge)
		if err != nil {
			s.step = 2
			return nil, err
		}
		s.step = 1
		return resp, nil
	case 1:
		s.step = 2
		if err := s.verify(challenge); err != nil {
			return nil, err
		}
		return nil, nil
	}
	return nil, fmt.Errorf("%w: exchange already finished", errDigest)
}

// Complete is true only once the server's rspauth checked out.
func (s *digestSession) Complete() bool { return s.verified }

func (s *digestSession) Wrapper() SaslWrapper { return s.layer }

// respond parses the digest-challenge (RFC 2831 §2.1.1) and builds the
// digest-response (§2.1.2) the way Java's DigestMD5Client lays it out.
func (s *digestSession) respond(challenge []byte) ([]byte, error) {
	if len(challenge) > maxChallengeLen {
		return nil, fmt.Errorf("%w: challenge of %d bytes exceeds %d", errDigest, len(challenge), maxChallengeLen)
	}
	d, err := parseDirectives(challenge)
	if err != nil {
		return nil, err
	}
	if d.one("algorithm") != "md5-sess" {
		return nil, fmt.Errorf("%w: challenge algorithm %q, want md5-sess", errDigest, d.one("algorithm"))
	}
	if s.nonce = d.one("nonce"); s.nonce == "" {
		return nil, fmt.Errorf("%w: challenge has no nonce", errDigest)
	}
	utf8 := false
	if cs, ok := d.get("charset"); ok {
		if cs != "utf-8" {
			return nil, fmt.Errorf("%w: challenge charset %q, want utf-8", errDigest, cs)
		}
		utf8 = true
	}
	// Like Java's RealmChoiceCallback default: the first realm offered.
	s.realm = d.one("realm")
	s.sendMaxBuf = defaultMaxBuf
	if mb, ok := d.get("maxbuf"); ok {
		n, err := strconv.Atoi(mb)
		if err != nil || n <= 16+10 {
			return nil, fmt.Errorf("%w: bad maxbuf %q", errDigest, mb)
		}
		s.sendMaxBuf = n
	}
	if err := s.chooseQOP(d.one("qop"), d.one("cipher")); err != nil {
		return nil, err
	}
	if s.cnonce, err = s.cnonceFn(); err != nil {
		return nil, fmt.Errorf("%w: cnonce: %w", errDigest, err)
	}
	s.hA1 = sessionKey(s.username, s.realm, s.password, s.nonce, s.cnonce)

	var b bytes.Buffer
	if utf8 {
		b.WriteString("charset=utf-8,")
	}
	fmt.Fprintf(&b, `username="%s",`, quote(s.username))
	if s.realm != "" {
		fmt.Fprintf(&b, `realm="%s",`, quote(s.realm))
	}
	fmt.Fprintf(&b, `nonce="%s",nc=%s,cnonce="%s",digest-uri="%s",maxbuf=%d,`,
		quote(s.nonce), nonceCount, quote(s.cnonce), s.digestURI, s.recvMaxBuf)
	fmt.Fprintf(&b, "response=%s,qop=%s", responseValue(s.hA1, "AUTHENTICATE", s.digestURI, s.qop, s.nonce, s.cnonce), s.qop)
	if s.cipher != "" {
		fmt.Fprintf(&b, `,cipher="%s"`, s.cipher)
	}
	return b.Bytes(), nil
}

// chooseQOP takes the strongest QOP both sides accept and, for auth-conf,
// the first cipher of ours the server offers.
func (s *digestSession) chooseQOP(offered, ciphers string) error {
	server := splitList(offered)
	if len(server) == 0 {
		server = []string{qopAuth} // RFC 2831: qop defaults to auth
	}
	for _, q := range s.qops {
		if slices.Contains(server, q) {
			s.qop = q
			break
		}
	}
	if s.qop == "" {
		return fmt.Errorf("%w: no common protection: server offers qop %q, client accepts %q",
			errDigest, offered, strings.Join(s.qops, ","))
	}
	if s.qop != qopAuthConf {
		return nil
	}
	serverCiphers := splitList(ciphers)
	for _, c := range s.ciphers {
		if slices.Contains(serverCiphers, c) {
			s.cipher = c
			return nil
		}
	}
	return fmt.Errorf("%w: no common cipher: server offers %q, client accepts %q",
		errDigest, ciphers, strings.Join(s.ciphers, ","))
}

// verify checks the server's response-auth (RFC 2831 §2.1.3): it proves the
// server knows the token's password, so a wrong one means a rogue server.
func (s *digestSession) verify(final []byte) error {
	d, err := parseDirectives(final)
	if err != nil {
		return err
	}
	got, ok := d.get("rspauth")
	if !ok {
		return fmt.Errorf("%w: server sent no rspauth", errDigest)
	}
	want := responseValue(s.hA1, "", s.digestURI, s.qop, s.nonce, s.cnonce)
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return fmt.Errorf("%w: server's rspauth does not match: the server does not know the token's password", errDigest)
	}
	if s.qop != qopAuth {
		layer, err := newDigestLayer(s.hA1, s.qop, s.cipher, s.sendMaxBuf, true)
		if err != nil {
			return err
		}
		s.layer = layer
	}
	s.verified = true
	if s.onComplete != nil {
		s.onComplete(s.qop, s.cipher)
	}
	return nil
}

// sessionKey is H(A1) for md5-sess without authzid (Hadoop sends none):
// H( H(user:realm:pass) : nonce : cnonce ).
func sessionKey(user, realm, pass, nonce, cnonce string) [md5.Size]byte {
	inner := md5.Sum([]byte(user + ":" + realm + ":" + pass))
	a1 := append(inner[:], ":"+nonce+":"+cnonce...)
	return md5.Sum(a1)
}

// responseValue is the RFC 2831 response-value; method is "AUTHENTICATE"
// for the client's response and "" for the server's rspauth.
func responseValue(hA1 [md5.Size]byte, method, uri, qop, nonce, cnonce string) string {
	a2 := method + ":" + uri
	if qop != qopAuth {
		a2 += securityLayerMarker
	}
	hA2 := md5.Sum([]byte(a2))
	kd := hex.EncodeToString(hA1[:]) + ":" + nonce + ":" + nonceCount + ":" + cnonce + ":" + qop + ":" + hex.EncodeToString(hA2[:])
	sum := md5.Sum([]byte(kd))
	return hex.EncodeToString(sum[:])
}

// randomCnonce matches Java's: 30 random bytes, base64 (40 characters).
func randomCnonce() (string, error) {
	b := make([]byte, 30)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64Std(b), nil
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// quote escapes a quoted-string value (RFC 2831 §7.2).
func quote(v string) string {
	if !strings.ContainsFunc(v, needEscape) {
		return v
	}
	var b strings.Builder
	for _, r := range v {
		if needEscape(r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func needEscape(r rune) bool {
	return r == '"' || r == '\\' || r == 127 || (r >= 0 && r <= 31 && r != '\r' && r != '\t' && r != '\n')
}

// splitList splits a comma-separated directive value, as Java's
// StringTokenizer(", \t\n") does.
func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}
