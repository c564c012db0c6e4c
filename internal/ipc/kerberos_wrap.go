package ipc

import (
	"crypto/hmac"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/crypto/etype"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/keyusage"
	"github.com/jcmturner/gokrb5/v8/types"
)

// RFC 4121 §4.2.6.2 Wrap token layout and flags.
const (
	cfxHeaderLen = 16

	cfxFlagSentByAcceptor = 0x01
	cfxFlagSealed         = 0x02
	cfxFlagAcceptorSubkey = 0x04
)

var errGSS = errors.New("kerberos")

// cfxEnctype reports whether the enctype uses RFC 4121 (CFX) per-message
// tokens and is supported here. The older enctypes (des3-cbc-sha1, rc4-hmac)
// use RFC 1964 tokens, which JDK 17 disables by default and this client does
// not implement. aes256-cts-hmac-sha384-192 is left out too: gokrb5 v8.4.4
// gets its key size wrong (24 bytes instead of 32) and cannot use it.
func cfxEnctype(id int32) bool {
	switch id {
	case etypeID.AES128_CTS_HMAC_SHA1_96, etypeID.AES256_CTS_HMAC_SHA1_96,
		etypeID.AES128_CTS_HMAC_SHA256_128:
		return true
	}
	return false
}

// unsupportedEnctype explains why a session key's enctype is refused.
func unsupportedEnctype(id int32) string {
	if id == etypeID.AES256_CTS_HMAC_SHA384_192 {
		return fmt.Sprintf("%s is not supported (gokrb5 mishandles its keys); use aes256-cts-hmac-sha1-96 or aes128-cts-hmac-sha1-96", enctypeName(id))
	}
	return fmt.Sprintf("%s needs RFC 1964 GSS tokens, which are not supported (JDK 17 disables them too); use aes256-cts-hmac-sha1-96 or aes128-cts-hmac-sha1-96", enctypeName(id))
}

func enctypeName(id int32) string {
	switch id {
	case etypeID.AES128_CTS_HMAC_SHA1_96:
		return "aes128-cts-hmac-sha1-96"
	case etypeID.AES256_CTS_HMAC_SHA1_96:
		return "aes256-cts-hmac-sha1-96"
	case etypeID.AES128_CTS_HMAC_SHA256_128:
		return "aes128-cts-hmac-sha256-128"
	case etypeID.AES256_CTS_HMAC_SHA384_192:
		return "aes256-cts-hmac-sha384-192"
	case etypeID.DES3_CBC_SHA1_KD:
		return "des3-cbc-sha1-kd"
	case etypeID.RC4_HMAC:
		return "rc4-hmac"
	}
	return fmt.Sprintf("enctype %d", id)
}

// gssLayer is one end of an established krb5 GSS context: it wraps and
// unwraps RFC 4121 Wrap tokens, like Java's WrapToken_v2. It is used for the
// SASL security-layer handshake and, for auth-int/auth-conf, as the
// SaslWrapper. Each direction has its own lock and sequence number.
type gssLayer struct {
	initiator      bool
	key            types.EncryptionKey
	et             etype.EType
	acceptorSubkey bool // the key is the acceptor's subkey (flag 0x04)

	conf    bool // auth-conf: seal what we send, insist on sealed input
	maxWrap int
	rrc     uint16 // rotation applied to our tokens (0 like Java; tests use 28 like Windows)

	wmu     sync.Mutex
	sendSeq uint64
	rmu     sync.Mutex
	recvSeq uint64
}

func newGSSLayer(initiator bool, key types.EncryptionKey, acceptorSubkey bool, sendSeq, recvSeq uint32) (*gssLayer, error) {
	if !cfxEnctype(key.KeyType) {
		return nil, fmt.Errorf("%w: %s", errGSS, unsupportedEnctype(key.KeyType))
	}
	et, err := crypto.GetEtype(key.KeyType)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errGSS, err)
	}
	if len(key.KeyValue) != et.GetKeyByteSize() {
		return nil, fmt.Errorf("%w: %s key of %d bytes, want %d", errGSS, enctypeName(key.KeyType), len(key.KeyValue), et.GetKeyByteSize())
	}
	return &gssLayer{
		initiator:      initiator,
		key:            key,
		et:             et,
		acceptorSubkey: acceptorSubkey,
		sendSeq:        uint64(sendSeq),
		recvSeq:        uint64(recvSeq),
	}, nil
}

func (l *gssLayer) cksumLen() int { return l.et.GetHMACBitLength() / 8 }

// sealOverhead and signOverhead are what a Wrap token adds to its payload.
func (l *gssLayer) sealOverhead() int {
	return cfxHeaderLen + l.et.GetConfounderByteSize() + cfxHeaderLen + l.cksumLen()
}
func (l *gssLayer) signOverhead() int { return cfxHeaderLen + l.cksumLen() }

// usage is the Wrap token key usage for tokens sent by the initiator or the
// acceptor. RFC 4121 §2: Wrap tokens use the SEAL usages whether sealed or
// not; the SIGN usages are for MIC tokens.
func usage(fromInitiator bool) uint32 {
	if fromInitiator {
		return keyusage.GSSAPI_INITIATOR_SEAL
	}
	return keyusage.GSSAPI_ACCEPTOR_SEAL
}

func (l *gssLayer) MaxWrapSize() int { return l.maxWrap }

// Wrap implements SaslWrapper: sealed for auth-conf, signed for auth-int.
func (l *gssLayer) Wrap(p []byte) ([]byte, error) {
	if l.maxWrap > 0 && len(p) > l.maxWrap {
		return nil, fmt.Errorf("%w: wrap of %d bytes exceeds the peer's buffer (%d)", errGSS, len(p), l.maxWrap)
	}
	return l.wrap(p, l.conf)
}

// Unwrap implements SaslWrapper.
func (l *gssLayer) Unwrap(p []byte) ([]byte, error) {
	return l.unwrap(p, l.conf)
}

func (l *gssLayer) flags(sealed bool) byte {
	var f byte
	if !l.initiator {
		f |= cfxFlagSentByAcceptor
	}
	if sealed {
		f |= cfxFlagSealed
	}
	if l.acceptorSubkey {
		f |= cfxFlagAcceptorSubkey
	}
	return f
}

func cfxHeader(flags byte, ec, rrc uint16, seq uint64) []byte {
	h := make([]byte, cfxHeaderLen)
	h[0], h[1], h[2], h[3] = 0x05, 0x04, flags, 0xff
	binary.BigEndian.PutUint16(h[4:6], ec)
	binary.BigEndian.PutUint16(h[6:8], rrc)
	binary.BigEndian.PutUint64(h[8:16], seq)
	return h
}

func (l *gssLayer) wrap(p []byte, sealed bool) ([]byte, error) {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	seq := l.sendSeq
	flags := l.flags(sealed)
	var ec uint16
	var body []byte
	if sealed {
		// E(plaintext | filler | header), EC = 0 (no filler: CTS needs none),
		// RRC = 0 in the encrypted copy of the header.
		plain := append(append(make([]byte, 0, len(p)+cfxHeaderLen), p...), cfxHeader(flags, 0, 0, seq)...)
		_, ct, err := l.et.EncryptMessage(l.key.KeyValue, plain, usage(l.initiator))
		if err != nil {
			return nil, fmt.Errorf("%w: seal: %w", errGSS, err)
		}
		body = ct
	} else {
		ec = uint16(l.cksumLen())
		signed := append(append(make([]byte, 0, len(p)+cfxHeaderLen), p...), cfxHeader(flags, 0, 0, seq)...)
		sum, err := l.et.GetChecksumHash(l.key.KeyValue, signed, usage(l.initiator))
		if err != nil {
			return nil, fmt.Errorf("%w: sign: %w", errGSS, err)
		}
		body = append(append(make([]byte, 0, len(p)+len(sum)), p...), sum[:ec]...)
	}
	if l.rrc != 0 && len(body) > 0 {
		body = rotateRight(body, int(l.rrc)%len(body))
	}
	l.sendSeq++
	return append(cfxHeader(flags, ec, l.rrc, seq), body...), nil
}

// unwrap checks one Wrap token from the peer. requireSealed refuses signed
// tokens (GssKrb5Base: "Privacy not protected"). The sequence number must be
// the next expected one: JDK 17's GssKrb5Base.checkMessageProp refuses
// duplicate, old, gap and out-of-sequence tokens, and so does this.
func (l *gssLayer) unwrap(tok []byte, requireSealed bool) ([]byte, error) {
	if len(tok) < cfxHeaderLen {
		return nil, fmt.Errorf("%w: wrap token of %d bytes is too short", errGSS, len(tok))
	}
	if tok[0] != 0x05 || tok[1] != 0x04 {
		if tok[0] == 0x60 || (tok[0] == 0x02 && tok[1] == 0x01) {
			return nil, fmt.Errorf("%w: peer sent an RFC 1964 token (older enctype), which is not supported", errGSS)
		}
		return nil, fmt.Errorf("%w: not a wrap token (id %02x%02x)", errGSS, tok[0], tok[1])
	}
	flags := tok[2]
	if tok[3] != 0xff {
		return nil, fmt.Errorf("%w: bad filler byte in wrap token", errGSS)
	}
	if fromAcceptor := flags&cfxFlagSentByAcceptor != 0; fromAcceptor == !l.initiator {
		return nil, fmt.Errorf("%w: wrap token has the wrong direction (a reflected token?)", errGSS)
	}
	if sub := flags&cfxFlagAcceptorSubkey != 0; sub != l.acceptorSubkey {
		return nil, fmt.Errorf("%w: wrap token acceptor-subkey flag is %v, want %v", errGSS, sub, l.acceptorSubkey)
	}
	sealed := flags&cfxFlagSealed != 0
	if requireSealed && !sealed {
		return nil, fmt.Errorf("%w: privacy not protected: the peer sent an unsealed token under auth-conf", errGSS)
	}
	ec := int(binary.BigEndian.Uint16(tok[4:6]))
	rrc := int(binary.BigEndian.Uint16(tok[6:8]))
	seq := binary.BigEndian.Uint64(tok[8:16])
	body := tok[cfxHeaderLen:]
	if rrc != 0 && len(body) > 0 {
		body = rotateLeft(body, rrc%len(body))
	}
	peerUsage := usage(!l.initiator)
	var data []byte
	if sealed {
		min := l.et.GetConfounderByteSize() + cfxHeaderLen + ec + l.cksumLen()
		if len(body) < min {
			return nil, fmt.Errorf("%w: sealed wrap token of %d bytes is too short", errGSS, len(tok))
		}
		plain, err := l.et.DecryptMessage(l.key.KeyValue, body, peerUsage)
		if err != nil {
			return nil, fmt.Errorf("%w: sealed wrap token fails its integrity check (wrong key, key usage or tampered)", errGSS)
		}
		if len(plain) < cfxHeaderLen+ec {
			return nil, fmt.Errorf("%w: sealed wrap token decrypts to %d bytes", errGSS, len(plain))
		}
		inner := plain[len(plain)-cfxHeaderLen:]
		// The encrypted header must repeat the outer one, RRC aside.
		if !hmac.Equal(inner[0:6], tok[0:6]) || !hmac.Equal(inner[8:16], tok[8:16]) {
			return nil, fmt.Errorf("%w: sealed wrap token header does not match its encrypted copy", errGSS)
		}
		data = append([]byte{}, plain[:len(plain)-cfxHeaderLen-ec]...)
	} else {
		if ec != l.cksumLen() || len(body) < ec {
			return nil, fmt.Errorf("%w: signed wrap token has checksum length %d (token %d bytes), want %d", errGSS, ec, len(tok), l.cksumLen())
		}
		msg, sum := body[:len(body)-ec], body[len(body)-ec:]
		signed := append(append(make([]byte, 0, len(msg)+cfxHeaderLen), msg...), cfxHeader(flags, 0, 0, seq)...)
		want, err := l.et.GetChecksumHash(l.key.KeyValue, signed, peerUsage)
		if err != nil {
			return nil, fmt.Errorf("%w: verify: %w", errGSS, err)
		}
		if len(want) < ec || !hmac.Equal(sum, want[:ec]) {
			return nil, fmt.Errorf("%w: signed wrap token fails its integrity check (wrong key, key usage or tampered)", errGSS)
		}
		data = append([]byte{}, msg...)
	}
	l.rmu.Lock()
	defer l.rmu.Unlock()
	if seq != l.recvSeq {
		return nil, fmt.Errorf("%w: wrap token out of sequence: got %d, want %d", errGSS, seq, l.recvSeq)
	}
	l.recvSeq++
	return data, nil
}

// rotateRight returns a copy of b rotated right by n (0 <= n < len(b)).
func rotateRight(b []byte, n int) []byte {
	out := make([]byte, 0, len(b))
	out = append(out, b[len(b)-n:]...)
	return append(out, b[:len(b)-n]...)
}

// rotateLeft undoes rotateRight.
func rotateLeft(b []byte, n int) []byte {
	out := make([]byte, 0, len(b))
	out = append(out, b[n:]...)
	return append(out, b[:n]...)
}
