//go:build bench

package bench

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The server side of Hadoop RPC as a NodeManager's ContainerManagementProtocol speaks it, for
// the simulated NodeManagers: the connection preamble, SASL TOKEN/DIGEST-MD5 authentication with
// the caller's NMToken (qop auth: no security layer), the connection context, then calls, each
// answered on its own goroutine. Both callers of a real NodeManager use it: the
// ResourceManager's AMLauncher (Java) for the AM's container, and tfyarn's AM for its tasks'.

const (
	rpcSaslCallID    int32 = -33
	rpcContextCallID int32 = -3
	rpcMaxFrame            = 64 << 20
	saslAuthByte           = 0xDF
)

// rpcHandler answers one call: the response message's bytes, or an error sent back as the
// call's exception.
type rpcHandler func(method string, body []byte) ([]byte, error)

// rpcServer accepts connections on ln and hands their calls to handle; passwordsOf returns
// what an NMToken's password may be, from its identifier (one per NM master key the node holds:
// the NodeManager's secret manager).
type rpcServer struct {
	ln          net.Listener
	handle      rpcHandler
	passwordsOf func(identifier []byte) ([][]byte, error)
	wg          sync.WaitGroup
}

func (s *rpcServer) serve() {
	s.wg.Add(1)
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer nc.Close()
			_ = s.serveConn(nc)
		}()
	}
}

// rpcConn is one caller's connection: reads on its goroutine, writes under wmu.
type rpcConn struct {
	nc  net.Conn
	r   *bufio.Reader
	wmu sync.Mutex
}

func (s *rpcServer) serveConn(nc net.Conn) error {
	c := &rpcConn{nc: nc, r: bufio.NewReader(nc)}
	pre := make([]byte, 7)
	if _, err := io.ReadFull(c.r, pre); err != nil {
		return err
	}
	if string(pre[:4]) != "hrpc" || pre[4] != 9 {
		return fmt.Errorf("not Hadoop RPC version 9: %q", pre)
	}
	if pre[6] != saslAuthByte {
		return errors.New("a NodeManager takes token-authenticated callers only")
	}
	if err := s.authenticate(c); err != nil {
		return err
	}
	var calls sync.WaitGroup
	defer calls.Wait()
	for {
		frame, err := readRPCFrame(c.r)
		if err != nil {
			return err
		}
		h := &hadoopcommon.RpcRequestHeaderProto{}
		rest, err := consumeMessage(frame, h)
		if err != nil {
			return err
		}
		if h.GetCallId() == rpcContextCallID {
			continue
		}
		req := &hadoopcommon.RequestHeaderProto{}
		if rest, err = consumeMessage(rest, req); err != nil {
			return err
		}
		body, n := protowire.ConsumeBytes(rest)
		if n < 0 {
			return protowire.ParseError(n)
		}
		calls.Add(1)
		go func() {
			defer calls.Done()
			resp, err := s.handle(req.GetMethodName(), body)
			c.reply(h, resp, err)
		}()
	}
}

func (c *rpcConn) reply(h *hadoopcommon.RpcRequestHeaderProto, resp []byte, err error) {
	rh := &hadoopcommon.RpcResponseHeaderProto{
		CallId:              proto.Uint32(uint32(h.GetCallId())),
		Status:              hadoopcommon.RpcResponseHeaderProto_SUCCESS.Enum(),
		ServerIpcVersionNum: proto.Uint32(9),
		ClientId:            h.GetClientId(),
		RetryCount:          proto.Int32(h.GetRetryCount()),
	}
	var parts [][]byte
	if err != nil {
		rh.Status = hadoopcommon.RpcResponseHeaderProto_ERROR.Enum()
		rh.ExceptionClassName = proto.String("org.apache.hadoop.yarn.exceptions.YarnException")
		rh.ErrorMsg = proto.String(err.Error())
		rh.ErrorDetail = hadoopcommon.RpcResponseHeaderProto_ERROR_APPLICATION.Enum()
	} else {
		parts = append(parts, resp)
	}
	c.write(rh, parts...)
}

// write sends one frame: the header and the already-encoded messages, each length-delimited.
func (c *rpcConn) write(h proto.Message, msgs ...[]byte) {
	hb, _ := proto.Marshal(h)
	var body []byte
	body = protowire.AppendBytes(body, hb)
	for _, m := range msgs {
		body = protowire.AppendBytes(body, m)
	}
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, _ = c.nc.Write(append(frame, body...))
}

func readRPCFrame(r io.Reader) ([]byte, error) {
	var l [4]byte
	if _, err := io.ReadFull(r, l[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(l[:])
	if n > rpcMaxFrame {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return b, err
}

func consumeMessage(b []byte, m proto.Message) ([]byte, error) {
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return nil, protowire.ParseError(n)
	}
	return b[n:], proto.Unmarshal(v, m)
}

// readSasl reads one SASL message (call id -33).
func (c *rpcConn) readSasl() (*hadoopcommon.RpcSaslProto, error) {
	frame, err := readRPCFrame(c.r)
	if err != nil {
		return nil, err
	}
	h := &hadoopcommon.RpcRequestHeaderProto{}
	rest, err := consumeMessage(frame, h)
	if err != nil {
		return nil, err
	}
	if h.GetCallId() != rpcSaslCallID {
		return nil, fmt.Errorf("call %d before authentication", h.GetCallId())
	}
	m := &hadoopcommon.RpcSaslProto{}
	_, err = consumeMessage(rest, m)
	return m, err
}

func (c *rpcConn) writeSasl(m *hadoopcommon.RpcSaslProto) {
	mb, _ := proto.Marshal(m)
	c.write(&hadoopcommon.RpcResponseHeaderProto{
		CallId: proto.Uint32(callIDOnWire(rpcSaslCallID)),
		Status: hadoopcommon.RpcResponseHeaderProto_SUCCESS.Enum(),
	}, mb)
}

// authenticate runs the server's side of SASL as Hadoop's Server does for TOKEN auth:
// NEGOTIATE answered with the DIGEST-MD5 offer and its first challenge, the client's INITIATE
// checked against the NMToken's password, SUCCESS with rspauth; a wrong response is FATAL.
func (s *rpcServer) authenticate(c *rpcConn) error {
	msg, err := c.readSasl()
	if err != nil {
		return err
	}
	if msg.GetState() != hadoopcommon.RpcSaslProto_NEGOTIATE {
		return fmt.Errorf("SASL starts with %v, not NEGOTIATE", msg.GetState())
	}
	d := &digestMD5Server{nonce: randomNonce()}
	c.writeSasl(&hadoopcommon.RpcSaslProto{
		State: hadoopcommon.RpcSaslProto_NEGOTIATE.Enum(),
		Auths: []*hadoopcommon.RpcSaslProto_SaslAuth{{
			Method:    proto.String("TOKEN"),
			Mechanism: proto.String("DIGEST-MD5"),
			Protocol:  proto.String(""),
			ServerId:  proto.String("default"),
			Challenge: d.challenge(),
		}},
	})
	if msg, err = c.readSasl(); err != nil {
		return err
	}
	if msg.GetState() != hadoopcommon.RpcSaslProto_INITIATE {
		return fmt.Errorf("SASL: %v, not INITIATE", msg.GetState())
	}
	rspauth, err := d.check(msg.GetToken(), s.passwordsOf)
	if err != nil {
		c.write(&hadoopcommon.RpcResponseHeaderProto{
			CallId:             proto.Uint32(callIDOnWire(rpcSaslCallID)),
			Status:             hadoopcommon.RpcResponseHeaderProto_FATAL.Enum(),
			ExceptionClassName: proto.String("javax.security.sasl.SaslException"),
			ErrorMsg:           proto.String(err.Error()),
			ErrorDetail:        hadoopcommon.RpcResponseHeaderProto_FATAL_UNAUTHORIZED.Enum(),
		})
		return err
	}
	c.writeSasl(&hadoopcommon.RpcSaslProto{State: hadoopcommon.RpcSaslProto_SUCCESS.Enum(), Token: rspauth})
	return nil
}

// callIDOnWire is a call id as a response header carries it (uint32: -33 is 0xFFFFFFDF).
func callIDOnWire(id int32) uint32 { return uint32(id) }

func randomNonce() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// digestMD5Server is RFC 2831's server for qop auth, as Java's DigestMD5Server runs it under
// Hadoop's SaslRpcServer: realm "default", md5-sess, utf-8; the user name is the token's
// identifier and the password its password, both base64.
type digestMD5Server struct {
	nonce string
}

func (d *digestMD5Server) challenge() []byte {
	return []byte(`realm="default",nonce="` + d.nonce + `",qop="auth",charset=utf-8,algorithm=md5-sess`)
}

// check verifies the client's digest-response and returns the rspauth that proves the server
// knows the password too.
func (d *digestMD5Server) check(resp []byte, passwordsOf func([]byte) ([][]byte, error)) ([]byte, error) {
	dir := parseDigestDirectives(string(resp))
	identifier, err := base64.StdEncoding.DecodeString(dir["username"])
	if err != nil {
		return nil, fmt.Errorf("DIGEST-MD5: user name is not base64: %w", err)
	}
	passwords, err := passwordsOf(identifier)
	if err != nil {
		return nil, fmt.Errorf("DIGEST-MD5: %w", err)
	}
	if dir["nonce"] != d.nonce || dir["qop"] != "auth" {
		return nil, fmt.Errorf("DIGEST-MD5: nonce or qop (%q) not the ones offered", dir["qop"])
	}
	for _, password := range passwords {
		a1 := md5.Sum([]byte(dir["username"] + ":" + dir["realm"] + ":" + base64.StdEncoding.EncodeToString(password)))
		sess := string(a1[:]) + ":" + d.nonce + ":" + dir["cnonce"]
		if z := dir["authzid"]; z != "" {
			sess += ":" + z
		}
		ha1 := md5.Sum([]byte(sess))
		value := func(a2 string) string {
			h2 := md5.Sum([]byte(a2))
			kd := hex.EncodeToString(ha1[:]) + ":" + d.nonce + ":" + dir["nc"] + ":" + dir["cnonce"] + ":auth:" + hex.EncodeToString(h2[:])
			sum := md5.Sum([]byte(kd))
			return hex.EncodeToString(sum[:])
		}
		if value("AUTHENTICATE:"+dir["digest-uri"]) == dir["response"] {
			return []byte("rspauth=" + value(":"+dir["digest-uri"])), nil
		}
	}
	return nil, errors.New("DIGEST-MD5: digest response format violation. Mismatched response.")
}

// parseDigestDirectives reads key=value and key="quoted value" pairs separated by commas.
func parseDigestDirectives(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		s = strings.TrimLeft(s, " \t,")
		key, rest, ok := strings.Cut(s, "=")
		if !ok {
			break
		}
		var val bytes.Buffer
		if strings.HasPrefix(rest, `"`) {
			i := 1
			for ; i < len(rest) && rest[i] != '"'; i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
				}
				val.WriteByte(rest[i])
			}
			rest = rest[min(i+1, len(rest)):]
		} else {
			v, r, _ := strings.Cut(rest, ",")
			val.WriteString(v)
			rest = r
		}
		out[strings.TrimSpace(key)] = val.String()
		s = rest
	}
	return out
}

// nmTokenPassword is what the ResourceManager's secret manager computes for an NMToken:
// HMAC-SHA1 of its identifier under the NM master key.
func nmTokenPassword(identifier, key []byte) []byte {
	m := hmac.New(sha1.New, key)
	m.Write(identifier)
	return m.Sum(nil)
}
