package ipc

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/gssapi"
	"github.com/jcmturner/gokrb5/v8/iana/chksumtype"
	"github.com/jcmturner/gokrb5/v8/iana/flags"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

// RFC 4121 §4.1 context token ids.
var (
	tokAPReq    = [2]byte{0x01, 0x00}
	tokAPRep    = [2]byte{0x02, 0x00}
	tokKRBError = [2]byte{0x03, 0x00}
)

// krb5MechOID is the DER encoding of 1.2.840.113554.1.2.2.
var krb5MechOID = []byte{0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02}

// gssContextFlags are what the JDK's GssKrb5Client asks for (mutual, conf,
// integ) plus Krb5Context's defaults (replay and sequence detection).
const gssContextFlags = gssapi.ContextFlagMutual | gssapi.ContextFlagReplay | gssapi.ContextFlagSequence |
	gssapi.ContextFlagConf | gssapi.ContextFlagInteg

// RFC 4752 security layer bits.
var qopBit = map[string]byte{qopAuth: 1, qopAuthInt: 2, qopAuthConf: 4}

// maxContextToken bounds the AP-REP and KRB-ERROR tokens we parse.
const maxContextToken = 64 << 10

// krbSession is one client-side GSSAPI exchange.
type krbSession struct {
	cname      types.PrincipalName
	crealm     string
	tkt        messages.Ticket
	sessKey    types.EncryptionKey
	qops       []string // acceptable, strongest first
	recvMaxBuf int
	onComplete func(string)

	step  int // 0: send AP-REQ, 1: await AP-REP, 2: await layer offer, 3: done
	auth  types.Authenticator
	layer *gssLayer
	qop   string
	done  bool
}

// EffectiveUser is the full principal name (alice@EXAMPLE.COM): Hadoop's
// ProtoUtil.makeIpcConnectionContext sends ugi.getUserName() under
// KERBEROS, and anything else reads as a proxy-user request.
func (s *krbSession) EffectiveUser() string {
	return s.cname.PrincipalNameString() + "@" + s.crealm
}

func (s *krbSession) Complete() bool { return s.done }

func (s *krbSession) Wrapper() SaslWrapper {
	if !s.done || s.qop == qopAuth {
		return nil
	}
	return s.layer
}

func (s *krbSession) Step(challenge []byte) ([]byte, error) {
	switch s.step {
	case 0:
		if len(challenge) != 0 {
			return nil, fmt.Errorf("%w: unexpected challenge before the initial token", errGSS)
		}
		tok, err := s.initialToken()
		if err != nil {
			s.step = 3
			return nil, err
		}
		s.step = 1
		return tok, nil
	case 1:
		if err := s.acceptAPRep(challenge); err != nil {
			s.step = 3
			return nil, err
		}
		s.step = 2
		return []byte{}, nil // RFC 2222 7.2.1: the context is established, respond with no data
	case 2:
		if len(challenge) == 0 {
			return []byte{}, nil // GssKrb5Client answers an empty S0 with nothing
		}
		resp, err := s.chooseLayer(challenge)
		s.step = 3
		return resp, err
	}
	return nil, fmt.Errorf("%w: exchange already finished", errGSS)
}

// initialToken builds the GSS initial context token: the AP-REQ with a
// fresh initiator subkey, sequence number and the 0x8003 checksum, framed
// per RFC 2743 §3.1, as the JDK's InitSecContextToken does.
func (s *krbSession) initialToken() ([]byte, error) {
	auth, err := types.NewAuthenticator(s.crealm, s.cname)
	if err != nil {
		return nil, fmt.Errorf("%w: authenticator: %w", errGSS, err)
	}
	et, err := crypto.GetEtype(s.sessKey.KeyType)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errGSS, err)
	}
	if auth.SubKey, err = types.GenerateEncryptionKey(et); err != nil {
		return nil, fmt.Errorf("%w: subkey: %w", errGSS, err)
	}
	auth.Cksum = types.Checksum{CksumType: chksumtype.GSSAPI, Checksum: gssChecksum(gssContextFlags)}
	req, err := messages.NewAPReq(s.tkt, s.sessKey, auth)
	if err != nil {
		return nil, fmt.Errorf("%w: AP-REQ: %w", errGSS, err)
	}
	types.SetFlag(&req.APOptions, flags.APOptionMutualRequired)
	b, err := req.Marshal()
	if err != nil {
		return nil, fmt.Errorf("%w: AP-REQ: %w", errGSS, err)
	}
	s.auth = auth
	return gssFrame(tokAPReq, b), nil
}

// gssChecksum is RFC 4121 §4.1.1's authenticator checksum: Lgth 16, empty
// channel bindings (Java passes none), flags; no delegation.
func gssChecksum(fl uint32) []byte {
	b := make([]byte, 24)
	binary.LittleEndian.PutUint32(b[0:4], 16)
	binary.LittleEndian.PutUint32(b[20:24], fl)
	return b
}

// acceptAPRep verifies the server's AP-REP (KrbApRep: decrypt with the
// ticket session key, usage 12, and check the ctime/cusec echo), then keys
// the context like the JDK's AcceptSecContextToken: the acceptor subkey when
// the AP-REP has one, else our initiator subkey; our sequence numbers start
// at the authenticator's, the server's at the AP-REP's (0 if absent).
func (s *krbSession) acceptAPRep(tok []byte) error {
	rep, err := parseAPRepToken(tok)
	if err != nil {
		return err
	}
	if err := checkEncLen(s.sessKey.KeyType, len(rep.EncPart.Cipher)); err != nil {
		return err
	}
	plain, err := crypto.DecryptEncPart(rep.EncPart, s.sessKey, keyusage.AP_REP_ENCPART)
	if err != nil {
		return fmt.Errorf("%w: mutual authentication failed: the AP-REP does not decrypt with the session key (is the server the one the ticket is for?)", errGSS)
	}
	var enc messages.EncAPRepPart
	if err := enc.Unmarshal(plain); err != nil {
		return fmt.Errorf("%w: malformed EncAPRepPart: %w", errGSS, err)
	}
	if enc.CTime.Unix() != s.auth.CTime.Unix() || enc.Cusec != s.auth.Cusec {
		return fmt.Errorf("%w: mutual authentication failed: the AP-REP does not echo our authenticator's time", errGSS)
	}
	key, acceptorSubkey := s.auth.SubKey, false
	if enc.Subkey.KeyType != 0 || len(enc.Subkey.KeyValue) != 0 {
		key, acceptorSubkey = enc.Subkey, true
	}
	s.layer, err = newGSSLayer(true, key, acceptorSubkey, uint32(s.auth.SeqNumber), uint32(enc.SequenceNumber))
	return err
}

// parseAPRepToken unframes the server's context token: an AP-REP, or a
// KRB-ERROR returned as a *KerberosError.
func parseAPRepToken(tok []byte) (*messages.APRep, error) {
	if len(tok) > maxContextToken {
		return nil, fmt.Errorf("%w: context token of %d bytes is too long", errGSS, len(tok))
	}
	id, inner, err := gssUnframe(tok)
	if err != nil {
		return nil, err
	}
	switch id {
	case tokAPRep:
		var rep messages.APRep
		if err := rep.Unmarshal(inner); err != nil {
			return nil, fmt.Errorf("%w: malformed AP-REP: %w", errGSS, err)
		}
		return &rep, nil
	case tokKRBError:
		var ke messages.KRBError
		if err := ke.Unmarshal(inner); err != nil {
			return nil, fmt.Errorf("%w: malformed KRB-ERROR from the server: %w", errGSS, err)
		}
		return nil, fmt.Errorf("%w: the server refused the AP-REQ: %w", errGSS, newKerberosError(ke))
	}
	return nil, fmt.Errorf("%w: unexpected context token id %02x%02x", errGSS, id[0], id[1])
}

// checkEncLen keeps gokrb5's decryption, which slices without checking,
// away from ciphertexts shorter than confounder + one block + checksum.
func checkEncLen(keyType int32, n int) error {
	et, err := crypto.GetEtype(keyType)
	if err != nil {
		return fmt.Errorf("%w: %w", errGSS, err)
	}
	if min := et.GetConfounderByteSize() + 16 + et.GetHMACBitLength()/8; n < min {
		return fmt.Errorf("%w: encrypted part of %d bytes is too short", errGSS, n)
	}
	return nil
}

// chooseLayer answers the server's security-layer offer (RFC 4752 §3.1,
// GssKrb5Client.doFinalHandshake): the strongest QOP both accept, our
// receive buffer (0 for plain auth), no authzid.
func (s *krbSession) chooseLayer(challenge []byte) ([]byte, error) {
	data, err := s.layer.unwrap(challenge, false)
	if err != nil {
		return nil, fmt.Errorf("%w: security layer offer: %w", errGSS, err)
	}
	if len(data) < 4 {
		return nil, fmt.Errorf("%w: security layer offer of %d bytes, want 4", errGSS, len(data))
	}
	mask := data[0]
	srvMax := int(data[1])<<16 | int(data[2])<<8 | int(data[3])
	for _, q := range s.qops {
		if mask&qopBit[q] != 0 {
			s.qop = q
			break
		}
	}
	if s.qop == "" {
		var offered []string
		for _, q := range []string{qopAuth, qopAuthInt, qopAuthConf} {
			if mask&qopBit[q] != 0 {
				offered = append(offered, q)
			}
		}
		return nil, fmt.Errorf("%w: no common protection layer between client and server: server offers [%s], client accepts [%s] (check hadoop.rpc.protection)",
			errGSS, strings.Join(offered, ","), strings.Join(s.qops, ","))
	}
	resp := make([]byte, 4)
	resp[0] = qopBit[s.qop]
	switch s.qop {
	case qopAuthInt:
		s.layer.maxWrap = srvMax - s.layer.signOverhead()
	case qopAuthConf:
		s.layer.maxWrap = srvMax - s.layer.sealOverhead()
	}
	if s.qop != qopAuth {
		if s.layer.maxWrap < 1 {
			return nil, fmt.Errorf("%w: the server's receive buffer (%d bytes) is too small for %s", errGSS, srvMax, s.qop)
		}
		resp[1], resp[2], resp[3] = byte(s.recvMaxBuf>>16), byte(s.recvMaxBuf>>8), byte(s.recvMaxBuf)
	}
	tok, err := s.layer.wrap(resp, false)
	if err != nil {
		return nil, err
	}
	s.layer.conf = s.qop == qopAuthConf
	s.done = true
	if s.onComplete != nil {
		s.onComplete(s.qop)
	}
	return tok, nil
}

// gssFrame wraps a context token per RFC 2743 §3.1: 0x60, DER length, the
// krb5 mechanism OID, the token id, the Kerberos message.
func gssFrame(id [2]byte, inner []byte) []byte {
	n := len(krb5MechOID) + 2 + len(inner)
	out := append([]byte{0x60}, derLength(n)...)
	out = append(out, krb5MechOID...)
	out = append(out, id[:]...)
	return append(out, inner...)
}

func derLength(n int) []byte {
	if n < 0x80 {
		return []byte{byte(n)}
	}
	var b []byte
	for v := n; v > 0; v >>= 8 {
		b = append([]byte{byte(v)}, b...)
	}
	return append([]byte{0x80 | byte(len(b))}, b...)
}

// gssUnframe is gssFrame's inverse; every length is checked against the input.
func gssUnframe(tok []byte) ([2]byte, []byte, error) {
	var id [2]byte
	if len(tok) < 2 || tok[0] != 0x60 {
		return id, nil, fmt.Errorf("%w: not a GSS context token", errGSS)
	}
	n, hdr := 0, 2
	if l := tok[1]; l < 0x80 {
		n = int(l)
	} else {
		k := int(l & 0x7f)
		if k == 0 || k > 3 || len(tok) < 2+k {
			return id, nil, fmt.Errorf("%w: bad GSS token length", errGSS)
		}
		for _, b := range tok[2 : 2+k] {
			n = n<<8 | int(b)
		}
		hdr += k
	}
	if n > len(tok)-hdr {
		return id, nil, fmt.Errorf("%w: GSS token claims %d bytes, has %d", errGSS, n, len(tok)-hdr)
	}
	body := tok[hdr : hdr+n]
	if len(body) < len(krb5MechOID)+2 || string(body[:len(krb5MechOID)]) != string(krb5MechOID) {
		return id, nil, fmt.Errorf("%w: GSS token is not for the Kerberos V5 mechanism", errGSS)
	}
	copy(id[:], body[len(krb5MechOID):])
	return id, body[len(krb5MechOID)+2:], nil
}
