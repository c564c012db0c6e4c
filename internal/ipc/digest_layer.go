package ipc

import (
	"crypto/cipher"
	"crypto/des"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rc4"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"
)

// RFC 2831 §2.3/§2.4 key derivation constants.
const (
	clientIntMagic  = "Digest session key to client-to-server signing key magic constant"
	serverIntMagic  = "Digest session key to server-to-client signing key magic constant"
	clientConfMagic = "Digest H(A1) to client-to-server sealing key magic constant"
	serverConfMagic = "Digest H(A1) to server-to-client sealing key magic constant"

	macLen      = 10 // HMAC-MD5 truncated
	trailerLen  = 6  // message type (2) + sequence number (4)
	intOverhead = macLen + trailerLen
	// confOverhead is what Java reserves for auth-conf (MAC, trailer and up
	// to 8 bytes of padding plus slack): maxbuf - 26 = 65,510 for 64 KiB.
	confOverhead = 26
)

// messageType is RFC 2831's fixed message type, 1, in network order.
var messageType = [2]byte{0, 1}

// cipherKeyLen is n in "the first n bytes of H(A1)" for each auth-conf cipher.
var cipherKeyLen = map[string]int{"rc4": 16, "3des": 16, "des": 16, "rc4-56": 7, "rc4-40": 5}

// digestLayer is the auth-int / auth-conf security layer, mirroring Java's
// DigestIntegrity / DigestPrivacy. Each direction has its own key, sequence
// number and cipher state, so Wrap and Unwrap may run concurrently.
type digestLayer struct {
	maxWrap int

	wmu     sync.Mutex
	myKi    []byte
	mySeq   uint32
	enc     streamOrBlock
	rmu     sync.Mutex
	peerKi  []byte
	peerSeq uint32
	dec     streamOrBlock
}

// streamOrBlock is rc4 (a stream, no padding) or CBC over (3)DES, whose
// chaining runs across messages as in Java (one Cipher per direction).
type streamOrBlock struct {
	stream *rc4.Cipher
	block  cipher.BlockMode
}

// none is true for auth-int, which only signs.
func (c streamOrBlock) none() bool { return c.stream == nil && c.block == nil }

func (c streamOrBlock) blockSize() int {
	if c.block != nil {
		return c.block.BlockSize()
	}
	return 1
}

func (c streamOrBlock) crypt(dst, src []byte) {
	if c.block != nil {
		c.block.CryptBlocks(dst, src)
		return
	}
	c.stream.XORKeyStream(dst, src)
}

// newDigestLayer derives the keys from H(A1). client selects which of each
// key pair is ours; the test server uses client=false.
func newDigestLayer(hA1 [md5.Size]byte, qop, cipherName string, sendMaxBuf int, client bool) (*digestLayer, error) {
	kic := md5.Sum(append(hA1[:], clientIntMagic...))
	kis := md5.Sum(append(hA1[:], serverIntMagic...))
	l := &digestLayer{myKi: kic[:], peerKi: kis[:]}
	if !client {
		l.myKi, l.peerKi = kis[:], kic[:]
	}
	switch qop {
	case qopAuthInt:
		l.maxWrap = sendMaxBuf - intOverhead
		return l, nil
	case qopAuthConf:
		l.maxWrap = sendMaxBuf - confOverhead
	default:
		return nil, fmt.Errorf("%w: no security layer for qop %q", errDigest, qop)
	}
	n, ok := cipherKeyLen[cipherName]
	if !ok {
		return nil, fmt.Errorf("%w: unsupported cipher %q", errDigest, cipherName)
	}
	kcc := md5.Sum(append(append([]byte{}, hA1[:n]...), clientConfMagic...))
	kcs := md5.Sum(append(append([]byte{}, hA1[:n]...), serverConfMagic...))
	myKc, peerKc := kcc[:], kcs[:]
	if !client {
		myKc, peerKc = kcs[:], kcc[:]
	}
	var err error
	if l.enc, err = newConfCipher(cipherName, myKc, true); err != nil {
		return nil, err
	}
	if l.dec, err = newConfCipher(cipherName, peerKc, false); err != nil {
		return nil, err
	}
	return l, nil
}

func newConfCipher(name string, kc []byte, encrypt bool) (streamOrBlock, error) {
	var b cipher.Block
	var err error
	switch name {
	case "rc4", "rc4-56", "rc4-40":
		// Java keys RC4 with all 16 bytes of Kc whatever n was.
		s, err := rc4.NewCipher(kc)
		return streamOrBlock{stream: s}, err
	case "des":
		b, err = des.NewCipher(desParityKey(kc[:7]))
	case "3des":
		// Two-key triple DES, K1 K2 K1, per Java's makeDesKeys.
		k1, k2 := desParityKey(kc[:7]), desParityKey(kc[7:14])
		b, err = des.NewTripleDESCipher(append(append(append([]byte{}, k1...), k2...), k1...))
	default:
		return streamOrBlock{}, fmt.Errorf("%w: unsupported cipher %q", errDigest, name)
	}
	if err != nil {
		return streamOrBlock{}, fmt.Errorf("%w: %s key: %w", errDigest, name, err)
	}
	iv := kc[8:16] // RFC 2831: the IV is the last 8 bytes of Kcc/Kcs
	if encrypt {
		return streamOrBlock{block: cipher.NewCBCEncrypter(b, iv)}, nil
	}
	return streamOrBlock{block: cipher.NewCBCDecrypter(b, iv)}, nil
}

// desParityKey spreads 56 key bits over 8 bytes, 7 bits each, with odd
// parity in the low bit (Java's addDesParity).
func desParityKey(raw []byte) []byte {
	var v uint64
	for _, b := range raw {
		v = v<<8 | uint64(b)
	}
	out := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b := byte(v&0x7f) << 1
		b |= byte(bits.OnesCount8(b)&1) ^ 1
		out[i] = b
		v >>= 7
	}
	return out
}

func (l *digestLayer) MaxWrapSize() int { return l.maxWrap }

// Wrap protects one message: msg || MAC for auth-int, E(msg || pad || MAC)
// for auth-conf, followed by the message type and our sequence number.
func (l *digestLayer) Wrap(p []byte) ([]byte, error) {
	if len(p) == 0 {
		return []byte{}, nil
	}
	if len(p) > l.maxWrap {
		return nil, fmt.Errorf("%w: wrap of %d bytes exceeds the peer's buffer (%d)", errDigest, len(p), l.maxWrap)
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	var seq [4]byte
	binary.BigEndian.PutUint32(seq[:], l.mySeq)
	l.mySeq++
	mac := digestMAC(l.myKi, seq, p)
	if l.enc.none() {
		out := make([]byte, 0, len(p)+intOverhead)
		out = append(out, p...)
		out = append(out, mac...)
		out = append(out, messageType[:]...)
		return append(out, seq[:]...), nil
	}
	pad := 0
	if bs := l.enc.blockSize(); bs > 1 {
		pad = bs - (len(p)+macLen)%bs
	}
	body := make([]byte, 0, len(p)+pad+macLen+trailerLen)
	body = append(body, p...)
	for range pad {
		body = append(body, byte(pad))
	}
	body = append(body, mac...)
	l.enc.crypt(body, body)
	body = append(body, messageType[:]...)
	return append(body, seq[:]...), nil
}

// Unwrap checks and strips the protection. Unlike Java, which silently
// drops a message with a bad MAC, it fails: on an RPC stream a dropped piece
// would only surface later as a garbled frame.
func (l *digestLayer) Unwrap(p []byte) ([]byte, error) {
	if len(p) == 0 {
		return []byte{}, nil
	}
	l.rmu.Lock()
	defer l.rmu.Unlock()
	if len(p) < intOverhead {
		return nil, fmt.Errorf("%w: wrapped message of %d bytes is too short", errDigest, len(p))
	}
	body, trailer := p[:len(p)-trailerLen], p[len(p)-trailerLen:]
	var seq [4]byte
	copy(seq[:], trailer[2:])
	var msg, mac []byte
	if l.dec.none() {
		msg, mac = body[:len(body)-macLen], body[len(body)-macLen:]
	} else {
		bs := l.dec.blockSize()
		if len(body)%bs != 0 {
			return nil, fmt.Errorf("%w: encrypted message of %d bytes is not a multiple of the block size", errDigest, len(body))
		}
		plain := make([]byte, len(body))
		l.dec.crypt(plain, body)
		msg, mac = plain[:len(plain)-macLen], plain[len(plain)-macLen:]
		if bs > 1 {
			pad := int(msg[len(msg)-1])
			if pad < 1 || pad > bs || pad > len(msg) {
				return nil, fmt.Errorf("%w: bad padding in a wrapped message", errDigest)
			}
			msg = msg[:len(msg)-pad]
		}
	}
	if !hmac.Equal(mac, digestMAC(l.peerKi, seq, msg)) {
		return nil, fmt.Errorf("%w: wrapped message fails its integrity check (MAC mismatch)", errDigest)
	}
	if got := binary.BigEndian.Uint32(seq[:]); got != l.peerSeq {
		return nil, fmt.Errorf("%w: wrapped message out of sequence: got %d, want %d", errDigest, got, l.peerSeq)
	}
	if subtle.ConstantTimeCompare(trailer[:2], messageType[:]) != 1 {
		return nil, fmt.Errorf("%w: wrapped message has type %d, want 1", errDigest, binary.BigEndian.Uint16(trailer[:2]))
	}
	l.peerSeq++
	return msg, nil
}

// digestMAC is HMAC-MD5(Ki, seqnum || msg), first 10 bytes.
func digestMAC(ki []byte, seq [4]byte, msg []byte) []byte {
	h := hmac.New(md5.New, ki)
	h.Write(seq[:])
	h.Write(msg)
	return h.Sum(nil)[:macLen]
}
