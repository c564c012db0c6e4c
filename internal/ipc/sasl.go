package ipc

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"google.golang.org/protobuf/proto"
)

// Hadoop auth method names (SaslRpcServer.AuthMethod) as they appear in SaslAuth.method.
const (
	MethodSimple   = "SIMPLE"
	MethodToken    = "TOKEN"    // mechanism DIGEST-MD5
	MethodKerberos = "KERBEROS" // mechanism GSSAPI
)

// ErrServerSimple: the server accepts SIMPLE authentication only, while the
// client insists on SASL (its configuration says Kerberos).
var ErrServerSimple = errors.New("ipc: sasl: server wants SIMPLE auth, but this client requires SASL")

// ErrNoCredentials is returned by SaslMechanism.Start when the client holds no
// credentials for the server's offer (e.g. no token for that service); the
// next offer is then tried, as Hadoop's SaslRpcClient does.
var ErrNoCredentials = errors.New("ipc: no credentials for this SASL offer")

// SaslOffer is one entry of the server's NEGOTIATE list.
type SaslOffer struct {
	Method    string // "TOKEN", "KERBEROS"
	Mechanism string // "DIGEST-MD5", "GSSAPI"
	Protocol  string // SASL protocol / service name, e.g. "rm" or "" for tokens
	ServerID  string // SASL server name, e.g. "default" for tokens or the host
	// Addr is the address this connection dialled (host:port, as configured):
	// with several servers behind one client (HA), what the offer must be
	// checked against is the principal configured for this address.
	Addr      string
	Challenge []byte // first challenge, if the server sent one with the offer
}

// SaslMechanism is one way this client can authenticate (TOKEN/DIGEST-MD5,
// KERBEROS/GSSAPI). Implementations live outside this package.
type SaslMechanism interface {
	Method() string
	Mechanism() string
	// Start begins an exchange for the server's offer. Returning ErrNoCredentials
	// moves on to the next offer.
	Start(ctx context.Context, offer SaslOffer) (SaslSession, error)
}

// SaslSession is one SASL exchange, like javax.security.sasl.SaslClient.
type SaslSession interface {
	// Step evaluates a server challenge and returns the response. The first
	// call gets the offer's challenge, or nil when the server sent none (a
	// mechanism with an initial response, like GSSAPI, answers it anyway).
	// Called with the token of the server's SUCCESS, it must return nil.
	Step(challenge []byte) ([]byte, error)
	// Complete reports whether the mechanism considers the exchange finished.
	Complete() bool
	// Wrapper returns the security layer when the negotiated QOP is auth-int
	// or auth-conf, nil for plain auth.
	Wrapper() SaslWrapper
}

// SaslWrapper protects traffic after negotiation. Each Wrap output travels in
// its own RpcSaslProto{WRAP} packet.
type SaslWrapper interface {
	Wrap(p []byte) ([]byte, error)
	Unwrap(p []byte) ([]byte, error)
	// MaxWrapSize is the largest plaintext one Wrap call accepts (the peer's
	// negotiated buffer size); <= 0 means unbounded.
	MaxWrapSize() int
}

func saslHeader() *hadoopcommon.RpcRequestHeaderProto {
	// Hadoop sends SASL packets with RpcConstants.DUMMY_CLIENT_ID (empty).
	return requestHeader(saslCallID, invalidRetryCount, []byte{})
}

func sendSasl(s stream, maxFrame int, m *hadoopcommon.RpcSaslProto) error {
	pkt, err := appendPacket(nil, maxFrame, saslHeader(), m)
	if err != nil {
		return err
	}
	if _, err := s.Write(pkt); err != nil {
		return err
	}
	return s.Flush()
}

// saslNegotiate runs the client side of SaslRpcClient.saslConnect: NEGOTIATE,
// choose an offer, INITIATE, CHALLENGE/RESPONSE rounds, SUCCESS. It returns the
// chosen auth method and, unless that is SIMPLE, the finished session.
func saslNegotiate(ctx context.Context, s stream, cfg *Config, addr string) (string, SaslSession, error) {
	if err := sendSasl(s, cfg.MaxFrame, &hadoopcommon.RpcSaslProto{State: hadoopcommon.RpcSaslProto_NEGOTIATE.Enum()}); err != nil {
		return "", nil, err
	}
	method := MethodSimple
	var sess SaslSession
	for {
		msg, err := readSasl(s, cfg.MaxFrame)
		if err != nil {
			return "", nil, err
		}
		var reply *hadoopcommon.RpcSaslProto
		switch msg.GetState() {
		case hadoopcommon.RpcSaslProto_NEGOTIATE:
			if sess != nil {
				return "", nil, errors.New("ipc: sasl: server negotiated twice")
			}
			offer, chosen, err := chooseSasl(ctx, msg.GetAuths(), cfg, addr)
			if err != nil {
				return "", nil, err
			}
			method = offer.GetMethod()
			echo := proto.Clone(offer).(*hadoopcommon.RpcSaslProto_SaslAuth)
			reply = &hadoopcommon.RpcSaslProto{
				State: hadoopcommon.RpcSaslProto_INITIATE.Enum(),
				Auths: []*hadoopcommon.RpcSaslProto_SaslAuth{echo},
			}
			if chosen == nil { // switching to SIMPLE: Hadoop sends INITIATE and expects no ack
				return method, nil, sendSasl(s, cfg.MaxFrame, reply)
			}
			sess = chosen
			echo.Challenge = nil // echo the server's entry exactly, minus the challenge
			tok, err := sess.Step(offer.GetChallenge())
			if err != nil {
				return "", nil, fmt.Errorf("ipc: sasl %s: %w", offer.GetMechanism(), err)
			}
			reply.Token = nonNil(tok)
		case hadoopcommon.RpcSaslProto_CHALLENGE:
			if sess == nil {
				return "", nil, errors.New("ipc: sasl: server sent an unsolicited challenge")
			}
			if msg.Token == nil {
				return "", nil, errors.New("ipc: sasl: server challenge contains no token")
			}
			tok, err := sess.Step(msg.GetToken())
			if err != nil {
				return "", nil, fmt.Errorf("ipc: sasl: %w", err)
			}
			reply = &hadoopcommon.RpcSaslProto{State: hadoopcommon.RpcSaslProto_RESPONSE.Enum(), Token: nonNil(tok)}
		case hadoopcommon.RpcSaslProto_SUCCESS:
			if sess == nil { // a SIMPLE server answers any SASL client with an immediate SUCCESS
				if cfg.RequireSASL {
					return "", nil, ErrServerSimple
				}
				return MethodSimple, nil, nil
			}
			if msg.Token != nil {
				extra, err := sess.Step(msg.GetToken())
				if err != nil {
					return "", nil, fmt.Errorf("ipc: sasl: %w", err)
				}
				if extra != nil {
					return "", nil, errors.New("ipc: sasl: client generated a spurious response to SUCCESS")
				}
			}
			if !sess.Complete() {
				return "", nil, errors.New("ipc: sasl: server reported success before the client completed")
			}
			return method, sess, nil
		default:
			return "", nil, fmt.Errorf("ipc: sasl: unexpected state %v", msg.GetState())
		}
		if err := sendSasl(s, cfg.MaxFrame, reply); err != nil {
			return "", nil, err
		}
	}
}

// chooseSasl picks the first server offer this client can satisfy, in the
// server's order, for the server at addr. A nil session means SIMPLE.
func chooseSasl(ctx context.Context, offers []*hadoopcommon.RpcSaslProto_SaslAuth, cfg *Config, addr string) (*hadoopcommon.RpcSaslProto_SaslAuth, SaslSession, error) {
	var methods []string
	for _, o := range offers {
		methods = append(methods, o.GetMethod())
		if o.GetMethod() == MethodSimple {
			if cfg.RequireSASL {
				continue
			}
			return o, nil, nil
		}
		for _, m := range cfg.SASL {
			if m.Method() != o.GetMethod() || m.Mechanism() != o.GetMechanism() {
				continue
			}
			sess, err := m.Start(ctx, SaslOffer{
				Method:    o.GetMethod(),
				Mechanism: o.GetMechanism(),
				Protocol:  o.GetProtocol(),
				ServerID:  o.GetServerId(),
				Challenge: o.GetChallenge(),
				Addr:      addr,
			})
			if errors.Is(err, ErrNoCredentials) {
				continue
			}
			if err != nil {
				return nil, nil, fmt.Errorf("ipc: sasl %s/%s: %w", o.GetMethod(), o.GetMechanism(), err)
			}
			return o, sess, nil
		}
	}
	if cfg.RequireSASL && slices.Contains(methods, MethodSimple) {
		// What an insecure server offers a client that has no token for it.
		return nil, nil, fmt.Errorf("%w (it offers %v)", ErrServerSimple, methods)
	}
	return nil, nil, fmt.Errorf("ipc: sasl: client cannot authenticate via %v", methods)
}

func readSasl(s stream, maxFrame int) (*hadoopcommon.RpcSaslProto, error) {
	frame, err := readFrame(s, maxFrame)
	if err != nil {
		return nil, err
	}
	h := &hadoopcommon.RpcResponseHeaderProto{}
	rest, err := unmarshalDelimited(frame, h)
	if err != nil {
		return nil, err
	}
	if h.GetStatus() != hadoopcommon.RpcResponseHeaderProto_SUCCESS {
		return nil, newRemoteError(h)
	}
	if int32(h.GetCallId()) != saslCallID {
		return nil, fmt.Errorf("%w: non-SASL response (call id %d) during negotiation", errMalformed, int32(h.GetCallId()))
	}
	msg := &hadoopcommon.RpcSaslProto{}
	rest, err = unmarshalDelimited(rest, msg)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: trailing bytes after SASL message", errMalformed)
	}
	return msg, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
