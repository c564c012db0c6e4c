package ipc

import (
	"crypto/md5"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"google.golang.org/protobuf/proto"
)

// digestServer is the server half of DIGEST-MD5 as Hadoop's SaslRpcServer
// drives Java's DigestMD5Server for TOKEN auth: realm "default", md5-sess,
// utf-8, the configured qops and Java's full cipher list.
type digestServer struct {
	token   security.Token // what the server's secret manager would compute
	qops    string         // e.g. "auth-conf" or "auth,auth-int"
	ciphers string         // empty: Java's "3des,rc4,des,rc4-56,rc4-40"
	maxBuf  int            // announced; 0: not announced (65536)
	nonce   string

	badRspauth bool // a rogue server that does not know the password

	// set by check
	qop, cipher string
}

const javaCiphers = "3des,rc4,des,rc4-56,rc4-40"

func (s *digestServer) challenge() []byte {
	if s.nonce == "" {
		s.nonce = "bm9uY2Utb2YtdGhlLXRlc3Qtc2VydmVy"
	}
	ciphers := s.ciphers
	if ciphers == "" {
		ciphers = javaCiphers
	}
	c := fmt.Sprintf(`realm="default",nonce="%s",qop="%s",charset=utf-8`, s.nonce, s.qops)
	if s.maxBuf > 0 {
		c += ",maxbuf=" + strconv.Itoa(s.maxBuf)
	}
	c += fmt.Sprintf(`,cipher="%s",algorithm=md5-sess`, ciphers)
	return []byte(c)
}

// check verifies a digest-response like DigestMD5Server.validateClientResponse
// and returns the server's final message and its security layer.
func (s *digestServer) check(resp []byte, wantURI string) ([]byte, SaslWrapper, error) {
	d, err := parseDirectives(resp)
	if err != nil {
		return nil, nil, err
	}
	user := d.one("username")
	if user != base64Std(s.token.Identifier) {
		return nil, nil, errors.New("DIGEST-MD5: unknown user")
	}
	if d.one("realm") != "default" || d.one("nonce") != s.nonce || d.one("nc") != "00000001" || d.one("charset") != "utf-8" {
		return nil, nil, fmt.Errorf("DIGEST-MD5: bad realm/nonce/nc/charset in %q", d)
	}
	if d.one("digest-uri") != wantURI {
		return nil, nil, fmt.Errorf("DIGEST-MD5: digest-uri %q, want %q", d.one("digest-uri"), wantURI)
	}
	s.qop = d.one("qop")
	if !slices.Contains(splitList(s.qops), s.qop) {
		return nil, nil, fmt.Errorf("DIGEST-MD5: qop %q not offered", s.qop)
	}
	s.cipher = d.one("cipher")
	if s.qop == qopAuthConf && s.cipher == "" {
		return nil, nil, errors.New("DIGEST-MD5: no cipher for auth-conf")
	}
	clientMax := defaultMaxBuf
	if mb, ok := d.get("maxbuf"); ok {
		if clientMax, err = strconv.Atoi(mb); err != nil {
			return nil, nil, err
		}
	}
	cnonce := d.one("cnonce")
	hA1 := sessionKey(user, "default", base64Std(s.token.Password), s.nonce, cnonce)
	if d.one("response") != responseValue(hA1, "AUTHENTICATE", wantURI, s.qop, s.nonce, cnonce) {
		return nil, nil, errors.New("DIGEST-MD5: digest response format violation. Mismatched response.")
	}
	key := hA1
	if s.badRspauth {
		key = md5.Sum([]byte("not the session key"))
	}
	final := []byte("rspauth=" + responseValue(key, "", wantURI, s.qop, s.nonce, cnonce))
	if s.qop == qopAuth {
		return final, nil, nil
	}
	layer, err := newDigestLayer(hA1, s.qop, s.cipher, clientMax, false)
	return final, layer, err
}

// saslServer plugs the digest server into fakeServer the way Hadoop's
// server sequences it: NEGOTIATE carrying the first challenge, INITIATE with
// the response, SUCCESS carrying rspauth; a bad response is a FATAL
// SaslException.
func (s *digestServer) saslServer(t require.TestingT) func(fc *fakeConn) (SaslWrapper, bool) {
	return func(fc *fakeConn) (SaslWrapper, bool) {
		msg, err := fc.readSasl()
		require.NoError(t, err)
		require.Equal(t, hadoopcommon.RpcSaslProto_NEGOTIATE, msg.GetState())
		fc.writeSasl(&hadoopcommon.RpcSaslProto{
			State: hadoopcommon.RpcSaslProto_NEGOTIATE.Enum(),
			Auths: []*hadoopcommon.RpcSaslProto_SaslAuth{{
				Method:    proto.String(MethodToken),
				Mechanism: proto.String(MechDigestMD5),
				Protocol:  proto.String(""),
				ServerId:  proto.String("default"),
				Challenge: s.challenge(),
			}},
		})
		msg, err = fc.readSasl()
		if err != nil {
			return nil, false // the client gave up (e.g. no common qop)
		}
		require.Equal(t, hadoopcommon.RpcSaslProto_INITIATE, msg.GetState())
		final, layer, err := s.check(msg.GetToken(), "/default")
		if err != nil {
			id := saslCallID
			h := &hadoopcommon.RpcResponseHeaderProto{
				CallId:             proto.Uint32(uint32(id)),
				Status:             hadoopcommon.RpcResponseHeaderProto_FATAL.Enum(),
				ExceptionClassName: proto.String("javax.security.sasl.SaslException"),
				ErrorMsg:           proto.String(err.Error()),
				ErrorDetail:        hadoopcommon.RpcResponseHeaderProto_FATAL_UNAUTHORIZED.Enum(),
			}
			pkt, perr := appendPacket(nil, 1<<30, h)
			require.NoError(t, perr)
			fc.writeRaw(pkt)
			return nil, false
		}
		fc.writeSasl(&hadoopcommon.RpcSaslProto{State: hadoopcommon.RpcSaslProto_SUCCESS.Enum(), Token: final})
		return layer, true
	}
}
