package ipc

import (
	"bytes"
	"context"
	"testing"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/types"
)

// fuzzKey is a fixed aes128 key so seeds stay valid across runs.
var fuzzKey = types.EncryptionKey{KeyType: etypeID.AES128_CTS_HMAC_SHA1_96, KeyValue: bytes.Repeat([]byte{0x5a}, 16)}

// FuzzParseAPRepToken: the server's context token (framing, AP-REP or
// KRB-ERROR) parses or fails, never panics, and the decryption guard holds.
func FuzzParseAPRepToken(f *testing.F) {
	fx := fixture(f, etypeID.AES128_CTS_HMAC_SHA1_96)
	k := fx.mechanism()
	sess, err := k.Start(context.Background(), testOffer)
	if err != nil {
		f.Fatal(err)
	}
	tok, err := sess.Step(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tok)
	for _, sub := range []bool{false, true} {
		rep, err := (&krbAcceptor{fx: fx, qops: 7, acceptorSubkey: sub, seq: 9}).accept(tok)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(rep)
	}
	krbErr, err := (&krbAcceptor{fx: fx, krbError: 37}).accept(tok)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(krbErr)
	f.Add([]byte{0x60, 0x84, 0xff, 0xff, 0xff, 0xff})
	s := sess.(*krbSession)
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := parseAPRepToken(data)
		if err != nil {
			return
		}
		if checkEncLen(s.sessKey.KeyType, len(rep.EncPart.Cipher)) != nil {
			return
		}
		c := *s
		_ = c.acceptAPRep(data)
	})
}

// FuzzKerberosUnwrap: any bytes unwrap to at most their own length, or fail.
func FuzzKerberosUnwrap(f *testing.F) {
	acc, err := newGSSLayer(false, fuzzKey, true, 0, 0)
	if err != nil {
		f.Fatal(err)
	}
	for _, rrc := range []uint16{0, 28} {
		acc.rrc = rrc
		for _, sealed := range []bool{false, true} {
			acc.sendSeq = 0
			tok, err := acc.wrap([]byte{7, 0, 0x10, 0}, sealed)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(tok, sealed)
		}
	}
	f.Add([]byte{5, 4, 5, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}, false)
	f.Fuzz(func(t *testing.T, data []byte, requireSealed bool) {
		ini, err := newGSSLayer(true, fuzzKey, true, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ini.unwrap(data, requireSealed)
		if err != nil {
			return
		}
		if len(out) > len(data) {
			t.Fatalf("%d bytes out of a %d-byte token", len(out), len(data))
		}
	})
}
