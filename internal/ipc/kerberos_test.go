package ipc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/crypto"
	"github.com/jcmturner/gokrb5/v8/iana/errorcode"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/krberror"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
)

var (
	fixturesMu sync.Mutex
	fixtures   = map[int32]*krbFixture{}
)

// fixture caches one fixture per enctype: string-to-key is slow on purpose.
func fixture(t testing.TB, etype int32) *krbFixture {
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	if f := fixtures[etype]; f != nil {
		return f
	}
	f := newKrbFixture(t, etype)
	fixtures[etype] = f
	return f
}

var testOffer = SaslOffer{Method: MethodKerberos, Mechanism: MechGSSAPI, Protocol: testService, ServerID: testHost}

// krbHandshake runs the SASL exchange between k and a in memory.
func krbHandshake(t *testing.T, k *Kerberos, a *krbAcceptor) (SaslSession, error) {
	t.Helper()
	sess, err := k.Start(context.Background(), testOffer)
	if err != nil {
		return nil, err
	}
	tok, err := sess.Step(nil)
	require.NoError(t, err)
	rep, err := a.accept(tok)
	require.NoError(t, err)
	empty, err := sess.Step(rep)
	if err != nil {
		return nil, err
	}
	require.Equal(t, []byte{}, empty)
	offer, err := a.offerLayers()
	require.NoError(t, err)
	resp, err := sess.Step(offer)
	if err != nil {
		return nil, err
	}
	require.True(t, sess.Complete())
	require.NoError(t, a.chosen(resp))
	return sess, nil
}

func TestKerberosOverIPC(t *testing.T) {
	for _, et := range testEnctypes {
		fx := fixture(t, et)
		for _, qop := range []string{qopAuth, qopAuthInt, qopAuthConf} {
			for _, subkey := range []bool{true, false} {
				for _, rrc := range []uint16{0, 28} {
					name := fmt.Sprintf("%s/%s/subkey=%v/rrc=%d", enctypeName(et), qop, subkey, rrc)
					t.Run(name, func(t *testing.T) {
						srv := newFakeServer(t, echo)
						a := &krbAcceptor{fx: fx, qops: 7, maxBuf: 4096, acceptorSubkey: subkey, rrc: rrc, seq: 12345}
						srv.sasl = a.saslServer(t)
						var got string
						k := fx.mechanism()
						k.Protection = []string{qop}
						k.OnComplete = func(q string) { got = q }
						c := newTestClient(t, Config{SASL: []SaslMechanism{k}, RequireSASL: true, User: "alice"}, srv.addr)
						big := strings.Repeat("kerberos payload ", 2000) // 34 KB: several 4 KiB pieces
						for _, in := range []string{"a", big, "b"} {
							out, err := callString(context.Background(), c, "m", in)
							require.NoError(t, err)
							require.Equal(t, in, out)
						}
						require.Equal(t, qop, got)
						require.Equal(t, qop, a.qop)
						require.Equal(t, "alice@"+testRealm, a.client)
						require.Equal(t, uint32(2|4|8|16|32), a.ctxFlags, "mutual|replay|sequence|conf|integ")
						require.Equal(t, "alice@"+testRealm, srv.contexts[0].GetUserInfo().GetEffectiveUser(),
							"Kerberos sends the full principal as the effective user")
					})
				}
			}
		}
	}
}

func TestKerberosQOPChoice(t *testing.T) {
	fx := fixture(t, etypeID.AES128_CTS_HMAC_SHA1_96)
	for _, tc := range []struct {
		prot   []string
		offers byte
		want   string // "" = refused
	}{
		{nil, 7, qopAuthConf},
		{nil, 1, qopAuth},
		{nil, 3, qopAuthInt},
		{[]string{"authentication", "integrity"}, 7, qopAuthInt},
		{[]string{"integrity", "privacy"}, 3, qopAuthInt},
		{[]string{"authentication"}, 7, qopAuth},
		{[]string{"privacy"}, 3, ""},
		{[]string{"auth-conf", "auth"}, 5, qopAuthConf},
	} {
		k := fx.mechanism()
		k.Protection = tc.prot
		a := &krbAcceptor{fx: fx, qops: tc.offers, acceptorSubkey: true}
		sess, err := krbHandshake(t, k, a)
		if tc.want == "" {
			require.ErrorContains(t, err, "no common protection layer", "%+v", tc)
			continue
		}
		require.NoError(t, err, "%+v", tc)
		require.Equal(t, tc.want, a.qop, "%+v", tc)
		require.Equal(t, tc.want == qopAuth, sess.Wrapper() == nil)
	}
	_, err := (&Kerberos{Client: fx.cl, Protection: []string{"secret"}}).Start(context.Background(), testOffer)
	require.ErrorContains(t, err, `unknown protection level "secret"`)
}

func TestKerberosServerPrincipal(t *testing.T) {
	fx := fixture(t, etypeID.AES128_CTS_HMAC_SHA1_96)
	for _, tc := range []struct {
		conf string
		ok   bool
	}{
		{"", true},
		{"nn/host1.example.com@EXAMPLE.COM", true},
		{"nn/host1.example.com", true},
		{"nn/host2.example.com@EXAMPLE.COM", false},
		{"rm/host1.example.com@EXAMPLE.COM", false},
		{"nn/host1.example.com@OTHER.ORG", false},
		{"nn/_HOST@EXAMPLE.COM", false},
		{"nn@EXAMPLE.COM", false},
	} {
		k := fx.mechanism()
		k.ServerPrincipal = tc.conf
		_, err := k.Start(context.Background(), testOffer)
		if tc.ok {
			require.NoError(t, err, tc.conf)
			continue
		}
		require.Error(t, err, tc.conf)
		if !strings.Contains(tc.conf, "_HOST") && strings.Contains(tc.conf, "/") {
			require.ErrorContains(t, err, "server principal nn/host1.example.com@EXAMPLE.COM does not match the configured "+tc.conf)
			require.ErrorContains(t, err, "yarn.resourcemanager.principal")
		}
	}
	_, err := fx.mechanism().Start(context.Background(), SaslOffer{Method: MethodKerberos, Mechanism: MechGSSAPI})
	require.ErrorContains(t, err, "without a principal")
	_, err = (&Kerberos{}).Start(context.Background(), testOffer)
	require.ErrorIs(t, err, ErrNoCredentials)
}

func TestKerberosMismatchOverIPC(t *testing.T) {
	fx := fixture(t, etypeID.AES128_CTS_HMAC_SHA1_96)
	srv := newFakeServer(t, echo)
	srv.sasl = (&krbAcceptor{fx: fx, qops: 7}).saslServer(t)
	k := fx.mechanism()
	k.ServerPrincipal = "nn/other.example.com@EXAMPLE.COM"
	c := newTestClient(t, Config{SASL: []SaslMechanism{k}}, srv.addr)
	_, err := callString(context.Background(), c, "m", "x")
	require.ErrorContains(t, err, "does not match the configured nn/other.example.com@EXAMPLE.COM")
	require.Empty(t, srv.gotCalls())
}

func TestKerberosRogueServer(t *testing.T) {
	fx := fixture(t, etypeID.AES256_CTS_HMAC_SHA1_96)
	_, err := krbHandshake(t, fx.mechanism(), &krbAcceptor{fx: fx, qops: 7, badAPRep: true})
	require.ErrorContains(t, err, "mutual authentication failed")
}

func TestKerberosServerKRBError(t *testing.T) {
	fx := fixture(t, etypeID.AES256_CTS_HMAC_SHA1_96)
	_, err := krbHandshake(t, fx.mechanism(), &krbAcceptor{fx: fx, qops: 7, krbError: errorcode.KRB_AP_ERR_SKEW})
	require.ErrorContains(t, err, "clock skew")
	var ke messages.KRBError
	require.True(t, errors.As(err, &ke), "%v", err)
	require.Equal(t, errorcode.KRB_AP_ERR_SKEW, ke.ErrorCode)
	var kerr *KerberosError
	require.True(t, errors.As(err, &kerr))
}

func TestKerberosKDCError(t *testing.T) {
	fx := fixture(t, etypeID.AES256_CTS_HMAC_SHA1_96)
	k := fx.mechanism()
	k.ticket = func(spn string) (messages.Ticket, types.EncryptionKey, error) {
		// What gokrb5's TGSExchange returns for a KDC's KRB-ERROR.
		kdc := messages.NewKRBError(types.PrincipalName{}, testRealm, errorcode.KDC_ERR_S_PRINCIPAL_UNKNOWN, "")
		return messages.Ticket{}, types.EncryptionKey{}, krberror.Errorf(kdc, krberror.KDCError, "TGS Exchange Error: kerberos error response from KDC when requesting for %s", spn)
	}
	_, err := k.Start(context.Background(), testOffer)
	require.ErrorContains(t, err, "server principal unknown to the KDC")
	require.ErrorContains(t, err, "nn/host1.example.com")
	var ke messages.KRBError
	require.True(t, errors.As(err, &ke), "%v", err)
	require.Equal(t, errorcode.KDC_ERR_S_PRINCIPAL_UNKNOWN, ke.ErrorCode)

	// A cancelled context abandons a hanging KDC.
	block := make(chan struct{})
	defer close(block)
	k.ticket = func(string) (messages.Ticket, types.EncryptionKey, error) {
		<-block
		return messages.Ticket{}, types.EncryptionKey{}, errors.New("unreachable")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = k.Start(ctx, testOffer)
	require.ErrorIs(t, err, context.Canceled)
}

func TestKerberosOldEnctypesRefused(t *testing.T) {
	for _, et := range []int32{etypeID.DES3_CBC_SHA1_KD, etypeID.RC4_HMAC, etypeID.AES256_CTS_HMAC_SHA384_192} {
		fx := newKrbFixture(t, et)
		_, err := fx.mechanism().Start(context.Background(), testOffer)
		require.ErrorContains(t, err, enctypeName(et))
	}
}

// layerPair returns an initiator and an acceptor layer sharing a key.
func layerPair(t testing.TB, et int32, subkey bool, rrc uint16) (*gssLayer, *gssLayer) {
	e, err := crypto.GetEtype(et)
	require.NoError(t, err)
	key, err := types.GenerateEncryptionKey(e)
	require.NoError(t, err)
	ini, err := newGSSLayer(true, key, subkey, 100, 7)
	require.NoError(t, err)
	acc, err := newGSSLayer(false, key, subkey, 7, 100)
	require.NoError(t, err)
	acc.rrc = rrc
	return ini, acc
}

func TestKerberosWrapRoundTrip(t *testing.T) {
	for _, et := range testEnctypes {
		for _, sealed := range []bool{false, true} {
			for _, rrc := range []uint16{0, 12, 28, 1000} {
				ini, acc := layerPair(t, et, rrc%2 == 0, rrc)
				for _, msg := range [][]byte{{}, []byte("x"), bytes.Repeat([]byte("0123456789"), 500)} {
					tok, err := acc.wrap(msg, sealed)
					require.NoError(t, err)
					require.Equal(t, sealed, tok[2]&cfxFlagSealed != 0)
					if sealed {
						require.False(t, bytes.Contains(tok, msg) && len(msg) > 8, "sealed token leaks plaintext")
					}
					got, err := ini.unwrap(tok, sealed)
					require.NoError(t, err, "%s sealed=%v rrc=%d", enctypeName(et), sealed, rrc)
					require.Equal(t, msg, got)

					tok, err = ini.wrap(msg, sealed)
					require.NoError(t, err)
					got, err = acc.unwrap(tok, false)
					require.NoError(t, err)
					require.Equal(t, msg, got)
				}
			}
		}
	}
}

func TestKerberosWrapRefusals(t *testing.T) {
	ini, acc := layerPair(t, etypeID.AES256_CTS_HMAC_SHA1_96, true, 0)
	for _, sealed := range []bool{false, true} {
		t.Run(fmt.Sprint("sealed=", sealed), func(t *testing.T) {
			// Our own token reflected back: wrong direction.
			tok, err := ini.wrap([]byte("hello"), sealed)
			require.NoError(t, err)
			_, err = ini.unwrap(tok, false)
			require.ErrorContains(t, err, "wrong direction")
			// The same token with the direction flag flipped: wrong key usage.
			forged := append([]byte(nil), tok...)
			forged[2] ^= cfxFlagSentByAcceptor
			_, err = ini.unwrap(forged, false)
			require.ErrorContains(t, err, "integrity check")
			require.NoError(t, ackSeq(acc, tok)) // keep the acceptor in step

			// Tampering anywhere after the header.
			tok, err = acc.wrap([]byte("hello, tamper me"), sealed)
			require.NoError(t, err)
			for _, i := range []int{cfxHeaderLen, len(tok) / 2, len(tok) - 1} {
				bad := append([]byte(nil), tok...)
				bad[i] ^= 0x40
				_, err = ini.unwrap(bad, false)
				require.ErrorContains(t, err, "integrity check", "byte %d", i)
			}
			// A changed sequence number in the header.
			bad := append([]byte(nil), tok...)
			bad[15] ^= 1
			_, err = ini.unwrap(bad, false)
			require.Error(t, err)
			// Acceptor-subkey flag mismatch.
			bad = append([]byte(nil), tok...)
			bad[2] ^= cfxFlagAcceptorSubkey
			_, err = ini.unwrap(bad, false)
			require.ErrorContains(t, err, "acceptor-subkey flag")
			// The genuine token once, then its replay.
			_, err = ini.unwrap(tok, false)
			require.NoError(t, err)
			_, err = ini.unwrap(tok, false)
			require.ErrorContains(t, err, "out of sequence")
		})
	}
	// auth-conf insists on sealed input.
	tok, err := acc.wrap([]byte("plain"), false)
	require.NoError(t, err)
	_, err = ini.unwrap(tok, true)
	require.ErrorContains(t, err, "privacy not protected")
	// Truncations never panic and never pass.
	tok, err = acc.wrap([]byte("truncate me"), true)
	require.NoError(t, err)
	for n := 0; n < len(tok); n++ {
		_, err := ini.unwrap(tok[:n], false)
		require.Error(t, err, "%d bytes", n)
	}
	// A wrap larger than the peer's buffer is refused.
	acc.maxWrap = 10
	_, err = acc.Wrap(make([]byte, 11))
	require.Error(t, err)
}

// ackSeq unwraps tok on l so sequence numbers stay aligned in a test.
func ackSeq(l *gssLayer, tok []byte) error {
	_, err := l.unwrap(tok, false)
	return err
}

func TestKerberosLayerKeyChoice(t *testing.T) {
	// Without an acceptor subkey both sides use the initiator's subkey, and
	// the wrap tokens carry no acceptor-subkey flag; with one, they do.
	fx := fixture(t, etypeID.AES256_CTS_HMAC_SHA1_96)
	for _, subkey := range []bool{false, true} {
		a := &krbAcceptor{fx: fx, qops: 7, acceptorSubkey: subkey}
		sess, err := krbHandshake(t, fx.mechanism(), a)
		require.NoError(t, err)
		w := sess.Wrapper().(*gssLayer)
		require.Equal(t, subkey, w.acceptorSubkey)
		require.Equal(t, a.layer.key, w.key)
		tok, err := w.Wrap([]byte("data"))
		require.NoError(t, err)
		require.Equal(t, subkey, tok[2]&cfxFlagAcceptorSubkey != 0)
		got, err := a.layer.Unwrap(tok)
		require.NoError(t, err)
		require.Equal(t, "data", string(got))
		require.Equal(t, defaultMaxBuf-w.sealOverhead(), w.MaxWrapSize(), "auth-conf under the server's default 64 KiB buffer")
	}
}

func TestGSSUnframe(t *testing.T) {
	inner := bytes.Repeat([]byte{0xab}, 300) // long-form length
	id, got, err := gssUnframe(gssFrame(tokAPRep, inner))
	require.NoError(t, err)
	require.Equal(t, tokAPRep, id)
	require.Equal(t, inner, got)
	for _, bad := range [][]byte{nil, {0x60}, {0x60, 0x84, 1, 1, 1, 1}, {0x60, 0x82, 0xff}, {0x60, 0x05, 0x06, 0x09}, {0x61, 0}} {
		_, _, err := gssUnframe(bad)
		require.Error(t, err, "%x", bad)
	}
}

// TestKerberosHAPrincipalPerAddress: with two servers behind one client (RM
// or NameNode HA), each connection is checked against the principal
// configured for the address it dialled. The first server is a standby; the
// second answers with a principal that is not its own (nn/host1, whose key
// it holds, where nn/host2 is configured for its address): the client
// refuses it before any call reaches it. Before, KerberosAuth dropped the
// check as soon as there were two principals and accepted whatever the
// second server offered.
func TestKerberosHAPrincipalPerAddress(t *testing.T) {
	const host2 = "host2.example.com"
	fx := newKrbFixture(t, etypeID.AES128_CTS_HMAC_SHA1_96)
	require.NoError(t, fx.kt.AddEntry(testService+"/"+host2, testRealm, "second secret", time.Now(), 1, fx.etype))
	standby := func(fc *fakeConn, call *fakeCall) {
		fc.replyError(call, hadoopcommon.RpcResponseHeaderProto_ERROR, StandbyException, "Operation category READ is not supported in state standby")
	}
	ha := func(t *testing.T, secondOffers string) (*fakeServer, *fakeServer, *Client, map[string]string) {
		srv1 := newFakeServer(t, standby)
		srv1.sasl = (&krbAcceptor{fx: fx, qops: 7}).saslServer(t)
		srv2 := newFakeServer(t, echo)
		srv2.sasl = (&krbAcceptor{fx: fx, qops: 7, serverID: secondOffers}).saslServer(t)
		principals := map[string]string{
			srv1.addr: testService + "/" + testHost + "@" + testRealm,
			srv2.addr: testService + "/" + host2 + "@" + testRealm,
		}
		mech := KerberosAuth(fx.cl, principals, nil).(*Kerberos)
		mech.ticket = fx.mechanism().ticket
		c := newTestClient(t, Config{SASL: []SaslMechanism{mech}, RequireSASL: true, MaxAttempts: 2}, srv1.addr, srv2.addr)
		return srv1, srv2, c, principals
	}

	t.Run("impostor behind the second address", func(t *testing.T) {
		srv1, srv2, c, principals := ha(t, testHost)
		_, err := callString(context.Background(), c, "m", "secret")
		var mm *PrincipalMismatchError
		require.True(t, errors.As(err, &mm), "want a principal mismatch after the failover, got %v", err)
		require.Equal(t, principals[srv2.addr], mm.Configured)
		require.Equal(t, testService+"/"+testHost+"@"+testRealm, mm.Offered)
		require.Len(t, srv1.gotCalls(), 1, "the standby saw the call")
		require.Empty(t, srv2.gotCalls(), "no call reaches a server with the wrong principal")
	})
	t.Run("the real second server", func(t *testing.T) {
		srv1, srv2, c, _ := ha(t, host2)
		out, err := callString(context.Background(), c, "m", "after failover")
		require.NoError(t, err)
		require.Equal(t, "after failover", out)
		require.Len(t, srv1.gotCalls(), 1)
		require.Len(t, srv2.gotCalls(), 1)
		require.Equal(t, srv2.addr, c.Addr(), "the client stays on the active server")
	})
	t.Run("an address with no configured principal", func(t *testing.T) {
		srv := newFakeServer(t, echo)
		srv.sasl = (&krbAcceptor{fx: fx, qops: 7}).saslServer(t)
		mech := KerberosAuth(fx.cl, map[string]string{"nn1.example.com:8020": testService + "/" + testHost + "@" + testRealm}, nil).(*Kerberos)
		mech.ticket = fx.mechanism().ticket
		c := newTestClient(t, Config{SASL: []SaslMechanism{mech}, RequireSASL: true, MaxAttempts: 1}, srv.addr)
		_, err := callString(context.Background(), c, "m", "x")
		require.ErrorContains(t, err, "no server principal is configured for "+srv.addr)
		require.Empty(t, srv.gotCalls())
	})
}
