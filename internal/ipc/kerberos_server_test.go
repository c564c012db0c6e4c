package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jcmturner/gofork/encoding/asn1"
	"github.com/jcmturner/gokrb5/v8/asn1tools"
	krbclient "github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/iana/asnAppTag"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/iana/msgtype"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"google.golang.org/protobuf/proto"
)

const (
	testRealm   = "EXAMPLE.COM"
	testService = "nn"
	testHost    = "host1.example.com"
)

// krbFixture is a KDC stand-in: the service keytab, and a client whose
// service tickets are minted directly with it.
type krbFixture struct {
	etype int32
	kt    *keytab.Keytab
	cl    *krbclient.Client
}

func newKrbFixture(t testing.TB, etype int32) *krbFixture {
	kt := keytab.New()
	require.NoError(t, kt.AddEntry(testService+"/"+testHost, testRealm, "service secret", time.Now(), 1, etype))
	cfg := config.New()
	cfg.LibDefaults.DefaultRealm = testRealm
	return &krbFixture{etype: etype, kt: kt, cl: krbclient.NewWithPassword("alice", testRealm, "unused", cfg)}
}

// mechanism is a Kerberos mechanism whose tickets come from the fixture.
func (f *krbFixture) mechanism() *Kerberos {
	return &Kerberos{
		Client:          f.cl,
		ServerPrincipal: testService + "/" + testHost + "@" + testRealm,
		ticket: func(spn string) (messages.Ticket, types.EncryptionKey, error) {
			now := time.Now().UTC()
			sname := types.NewPrincipalName(nametype.KRB_NT_PRINCIPAL, spn)
			return messages.NewTicket(f.cl.Credentials.CName(), testRealm, sname, testRealm, types.NewKrbFlags(), f.kt, f.etype, 1, now, now, now.Add(time.Hour), now.Add(time.Hour))
		},
	}
}

// krbAcceptor is the server half, doing what Hadoop's SaslRpcServer with
// the JDK's GssKrb5Server and Krb5Context (acceptor) do.
type krbAcceptor struct {
	fx             *krbFixture
	qops           byte // RFC 4752 bit mask offered
	maxBuf         int
	acceptorSubkey bool   // JDK acceptors send one; older ones may not
	seq            uint32 // acceptor's initial sequence number (0: none in the AP-REP)
	rrc            uint16 // rotate our Wrap tokens (Windows uses 28)
	badAPRep       bool   // a rogue server: AP-REP under the wrong key
	krbError       int32  // answer the AP-REQ with this KRB-ERROR
	serverID       string // the host part of the principal offered (testHost when empty)

	// learned
	client   string
	ctxFlags uint32
	qop      string
	layer    *gssLayer
}

// accept verifies the initial context token and returns the AP-REP token.
func (a *krbAcceptor) accept(tok []byte) ([]byte, error) {
	id, inner, err := gssUnframe(tok)
	if err != nil {
		return nil, err
	}
	if id != tokAPReq {
		return nil, fmt.Errorf("token id %x, want AP-REQ", id)
	}
	var req messages.APReq
	if err := req.Unmarshal(inner); err != nil {
		return nil, err
	}
	if a.krbError != 0 {
		ke := messages.NewKRBError(req.Ticket.SName, req.Ticket.Realm, a.krbError, "test error")
		b, err := ke.Marshal()
		if err != nil {
			return nil, err
		}
		return gssFrame(tokKRBError, b), nil
	}
	if ok, err := req.Verify(a.fx.kt, 5*time.Minute, types.HostAddress{}, nil); !ok || err != nil {
		return nil, fmt.Errorf("AP-REQ does not verify: %v", err)
	}
	if !types.IsFlagSet(&req.APOptions, flags.APOptionMutualRequired) {
		return nil, errors.New("mutual-required not set")
	}
	au := req.Authenticator
	if au.Cksum.CksumType != chksumtype.GSSAPI || len(au.Cksum.Checksum) < 24 || binary.LittleEndian.Uint32(au.Cksum.Checksum) != 16 {
		return nil, fmt.Errorf("bad GSS checksum %+v", au.Cksum)
	}
	a.ctxFlags = binary.LittleEndian.Uint32(au.Cksum.Checksum[20:24])
	a.client = au.CName.PrincipalNameString() + "@" + au.CRealm
	sessKey := req.Ticket.DecryptedEncPart.Key
	key := sessKey
	if au.SubKey.KeyType != 0 {
		key = au.SubKey
	}
	enc := messages.EncAPRepPart{CTime: au.CTime, Cusec: au.Cusec, SequenceNumber: int64(a.seq)}
	if a.acceptorSubkey {
		et, err := crypto.GetEtype(sessKey.KeyType)
		if err != nil {
			return nil, err
		}
		if enc.Subkey, err = types.GenerateEncryptionKey(et); err != nil {
			return nil, err
		}
		key = enc.Subkey
	}
	b, err := asn1.Marshal(enc)
	if err != nil {
		return nil, err
	}
	b = asn1tools.AddASNAppTag(b, asnAppTag.EncAPRepPart)
	encKey := sessKey
	if a.badAPRep {
		encKey = au.SubKey
	}
	ed, err := crypto.GetEncryptedData(b, encKey, keyusage.AP_REP_ENCPART, 0)
	if err != nil {
		return nil, err
	}
	rb, err := asn1.Marshal(messages.APRep{PVNO: 5, MsgType: msgtype.KRB_AP_REP, EncPart: ed})
	if err != nil {
		return nil, err
	}
	if a.layer, err = newGSSLayer(false, key, a.acceptorSubkey, a.seq, uint32(au.SeqNumber)); err != nil {
		return nil, err
	}
	a.layer.rrc = a.rrc
	return gssFrame(tokAPRep, asn1tools.AddASNAppTag(rb, asnAppTag.APREP)), nil
}

// offerLayers is GssKrb5Server.doHandshake1: [mask][max buffer], signed.
func (a *krbAcceptor) offerLayers() ([]byte, error) {
	maxBuf := a.maxBuf
	if maxBuf == 0 {
		maxBuf = defaultMaxBuf
	}
	return a.layer.wrap([]byte{a.qops, byte(maxBuf >> 16), byte(maxBuf >> 8), byte(maxBuf)}, false)
}

// chosen is GssKrb5Server.doHandshake2: check the client's choice.
func (a *krbAcceptor) chosen(tok []byte) error {
	data, err := a.layer.unwrap(tok, false)
	if err != nil {
		return err
	}
	if len(data) != 4 {
		return fmt.Errorf("client layer choice of %d bytes (authzid?)", len(data))
	}
	sel := data[0]
	if sel&a.qops == 0 || sel&(sel-1) != 0 {
		return fmt.Errorf("client selected unsupported protection: %d", sel)
	}
	clientMax := int(data[1])<<16 | int(data[2])<<8 | int(data[3])
	for q, bit := range qopBit {
		if bit == sel {
			a.qop = q
		}
	}
	switch a.qop {
	case qopAuth:
		if clientMax != 0 {
			return fmt.Errorf("client announced max buffer %d without a security layer", clientMax)
		}
	case qopAuthInt:
		a.layer.maxWrap = clientMax - a.layer.signOverhead()
	case qopAuthConf:
		a.layer.maxWrap = clientMax - a.layer.sealOverhead()
		a.layer.conf = true
	}
	return nil
}

func fatalSasl(t require.TestingT, fc *fakeConn, msg string) {
	id := saslCallID
	h := &hadoopcommon.RpcResponseHeaderProto{
		CallId:             proto.Uint32(uint32(id)),
		Status:             hadoopcommon.RpcResponseHeaderProto_FATAL.Enum(),
		ExceptionClassName: proto.String("javax.security.sasl.SaslException"),
		ErrorMsg:           proto.String(msg),
		ErrorDetail:        hadoopcommon.RpcResponseHeaderProto_FATAL_UNAUTHORIZED.Enum(),
	}
	pkt, err := appendPacket(nil, 1<<30, h)
	require.NoError(t, err)
	fc.writeRaw(pkt)
}

// saslServer plugs the acceptor into fakeServer the way Hadoop's Server
// sequences GSSAPI: NEGOTIATE (no challenge), INITIATE with the AP-REQ,
// CHALLENGE with the AP-REP, empty RESPONSE, CHALLENGE with the layer
// offer, RESPONSE with the choice, SUCCESS.
func (a *krbAcceptor) saslServer(t require.TestingT) func(fc *fakeConn) (SaslWrapper, bool) {
	return func(fc *fakeConn) (SaslWrapper, bool) {
		msg, err := fc.readSasl()
		require.NoError(t, err)
		require.Equal(t, hadoopcommon.RpcSaslProto_NEGOTIATE, msg.GetState())
		serverID := a.serverID
		if serverID == "" {
			serverID = testHost
		}
		fc.writeSasl(&hadoopcommon.RpcSaslProto{
			State: hadoopcommon.RpcSaslProto_NEGOTIATE.Enum(),
			Auths: []*hadoopcommon.RpcSaslProto_SaslAuth{{
				Method:    proto.String(MethodKerberos),
				Mechanism: proto.String(MechGSSAPI),
				Protocol:  proto.String(testService),
				ServerId:  proto.String(serverID),
			}},
		})
		msg, err = fc.readSasl()
		if err != nil {
			return nil, false // the client gave up before INITIATE
		}
		require.Equal(t, hadoopcommon.RpcSaslProto_INITIATE, msg.GetState())
		require.Equal(t, MethodKerberos, msg.GetAuths()[0].GetMethod())
		rep, err := a.accept(msg.GetToken())
		if err != nil {
			fatalSasl(t, fc, "GSS initiate failed: "+err.Error())
			return nil, false
		}
		fc.writeSasl(&hadoopcommon.RpcSaslProto{State: hadoopcommon.RpcSaslProto_CHALLENGE.Enum(), Token: rep})
		if msg, err = fc.readSasl(); err != nil {
			return nil, false
		}
		require.Equal(t, hadoopcommon.RpcSaslProto_RESPONSE, msg.GetState())
		require.Empty(t, msg.GetToken())
		offer, err := a.offerLayers()
		require.NoError(t, err)
		fc.writeSasl(&hadoopcommon.RpcSaslProto{State: hadoopcommon.RpcSaslProto_CHALLENGE.Enum(), Token: offer})
		if msg, err = fc.readSasl(); err != nil {
			return nil, false
		}
		require.Equal(t, hadoopcommon.RpcSaslProto_RESPONSE, msg.GetState())
		if err := a.chosen(msg.GetToken()); err != nil {
			fatalSasl(t, fc, "Final handshake failed: "+err.Error())
			return nil, false
		}
		fc.writeSasl(&hadoopcommon.RpcSaslProto{State: hadoopcommon.RpcSaslProto_SUCCESS.Enum()})
		if a.qop == qopAuth {
			return nil, true
		}
		return a.layer, true
	}
}

var testEnctypes = []int32{etypeID.AES256_CTS_HMAC_SHA1_96, etypeID.AES128_CTS_HMAC_SHA1_96, etypeID.AES128_CTS_HMAC_SHA256_128}
