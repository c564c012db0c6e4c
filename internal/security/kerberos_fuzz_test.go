package security

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"
)

// fuzzNow is the clock of the fuzzed logins; the synthetic cache's TGT is
// valid at it.
var fuzzNow = time.Unix(1_700_000_000, 0)

// fuzzLoginDeadline bounds one fuzzed login: nothing may wait on the KDC
// (a closed port) for longer.
const fuzzLoginDeadline = 10 * time.Second

// ccacheWriter lays out MIT's FILE ccache format, version 4 (big endian,
// https://web.mit.edu/kerberos/krb5-latest/doc/formats/ccache_file_format.html).
type ccacheWriter struct{ bytes.Buffer }

func (w *ccacheWriter) u16(v uint16) { w.Write(binary.BigEndian.AppendUint16(nil, v)) }
func (w *ccacheWriter) u32(v uint32) { w.Write(binary.BigEndian.AppendUint32(nil, v)) }
func (w *ccacheWriter) data(b []byte) {
	w.u32(uint32(len(b)))
	w.Write(b)
}

func (w *ccacheWriter) principal(nameType int32, realm string, comps ...string) {
	w.u32(uint32(nameType))
	w.u32(uint32(len(comps)))
	w.data([]byte(realm))
	for _, c := range comps {
		w.data([]byte(c))
	}
}

// syntheticCCache is what kinit alice@EXAMPLE.COM would leave: a v4 cache
// whose default principal is alice and whose one credential is a TGT valid
// from fuzzNow-1h to fuzzNow+9h. addrs is the address count written in the
// credential (with that many real addresses only when small).
func syntheticCCache(tb testing.TB, addrs uint32) []byte {
	tb.Helper()
	tkt := messages.Ticket{
		TktVNO: 5,
		Realm:  "EXAMPLE.COM",
		SName:  types.PrincipalName{NameType: nametype.KRB_NT_SRV_INST, NameString: []string{"krbtgt", "EXAMPLE.COM"}},
		EncPart: types.EncryptedData{
			EType:  etypeID.AES128_CTS_HMAC_SHA1_96,
			KVNO:   1,
			Cipher: bytes.Repeat([]byte{0xa5}, 64),
		},
	}
	tb2, err := tkt.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	var w ccacheWriter
	w.u16(0x0504)
	w.u16(12) // header: one KDC time offset field
	w.u16(1)
	w.u16(8)
	w.u32(0)
	w.u32(0)
	w.principal(nametype.KRB_NT_PRINCIPAL, "EXAMPLE.COM", "alice")
	// The credential.
	w.principal(nametype.KRB_NT_PRINCIPAL, "EXAMPLE.COM", "alice")
	w.principal(nametype.KRB_NT_SRV_INST, "EXAMPLE.COM", "krbtgt", "EXAMPLE.COM")
	w.u16(uint16(etypeID.AES128_CTS_HMAC_SHA1_96))
	w.data(bytes.Repeat([]byte{0x3c}, 16)) // session key
	start := uint32(fuzzNow.Add(-time.Hour).Unix())
	w.u32(start)                                      // authtime
	w.u32(start)                                      // starttime
	w.u32(uint32(fuzzNow.Add(9 * time.Hour).Unix()))  // endtime
	w.u32(uint32(fuzzNow.Add(24 * time.Hour).Unix())) // renew_till
	w.WriteByte(0)                                    // is_skey
	w.u32(0x40e10000)                                 // forwardable, renewable, initial, pre-authent
	w.u32(addrs)
	for range min(addrs, 2) {
		w.u16(2) // IPv4
		w.data([]byte{127, 0, 0, 1})
	}
	w.u32(0) // no authdata
	w.data(tb2)
	w.data(nil) // no second ticket
	return w.Bytes()
}

// clusterFile is a file the Kerberos test cluster left behind, if any.
func clusterFile(name string) []byte {
	b, err := os.ReadFile(filepath.Join("..", "..", ".testcluster-kerberos", name))
	if err != nil {
		return nil
	}
	return b
}

// checkKerberosResult is the common property: a *KerberosError or a login,
// never both, never neither.
func checkKerberosResult(t *testing.T, l *KerberosLogin, err error) {
	t.Helper()
	if err != nil {
		var ke *KerberosError
		if !errors.As(err, &ke) {
			t.Fatalf("err = %v (%T), want a *KerberosError", err, err)
		}
		if l != nil {
			t.Fatalf("a login (%s) and an error (%v)", l.Principal, err)
		}
		return
	}
	if l == nil || l.Client == nil {
		t.Fatal("neither a login nor an error")
	}
}

// loginBounded runs LoginKerberos and fails the run if it outlives
// fuzzLoginDeadline: a corrupt file must not make a login hang.
func loginBounded(t *testing.T, opts KerberosOptions) (*KerberosLogin, error) {
	t.Helper()
	type result struct {
		l   *KerberosLogin
		err error
	}
	done := make(chan result, 1)
	go func() {
		l, err := LoginKerberos(context.Background(), opts)
		done <- result{l, err}
	}()
	select {
	case r := <-done:
		return r.l, r.err
	case <-time.After(fuzzLoginDeadline):
		t.Fatalf("LoginKerberos did not return within %s", fuzzLoginDeadline)
		return nil, nil
	}
}

// FuzzLoginCCache writes arbitrary bytes as the ticket cache. A login from
// it must be a *KerberosError or a login whose principal is the cache's
// default principal (the requested one, if one was requested) with an
// unexpired TGT; never a panic, a hang or an unbounded allocation.
func FuzzLoginCCache(f *testing.F) {
	f.Add(syntheticCCache(f, 0), false)
	f.Add(syntheticCCache(f, 0), true)
	f.Add(syntheticCCache(f, 2), true)
	f.Add(syntheticCCache(f, 1<<31-1), false) // a count of addresses far beyond the file
	if b := clusterFile("alice.ccache"); b != nil {
		f.Add(b, false)
		f.Add(b, true)
	}
	if b := clusterFile("alice-expired.ccache"); b != nil {
		f.Add(b, false)
	}
	f.Add([]byte{0x05, 0x04, 0xff, 0xff, 0xff, 0xff, 1, 2}, false) // TestLoginKerberosErrors' garbage
	f.Add([]byte{}, false)

	f.Fuzz(func(t *testing.T, cc []byte, withPrincipal bool) {
		path := filepath.Join(t.TempDir(), "krb5cc")
		if err := os.WriteFile(path, cc, 0o600); err != nil {
			t.Fatal(err)
		}
		opts := KerberosOptions{
			Krb5Conf: writeKrb5Conf(t, closedPort(t)),
			CCache:   "FILE:" + path,
			Getenv:   func(string) string { return "" },
			Now:      func() time.Time { return fuzzNow },
			Timeout:  time.Second,
		}
		if withPrincipal {
			opts.Principal = "alice@EXAMPLE.COM"
		}
		l, err := loginBounded(t, opts)
		checkKerberosResult(t, l, err)
		if err != nil {
			return
		}
		parsed, perr := safeCall(func() (*credentials.CCache, error) { return credentials.LoadCCache(path) })
		if perr != nil {
			t.Fatalf("logged in from a cache that does not parse: %v", perr)
		}
		if want := parsed.DefaultPrincipal.PrincipalName.PrincipalNameString() + "@" + parsed.DefaultPrincipal.Realm; l.Principal != want {
			t.Fatalf("principal %q, the cache's is %q", l.Principal, want)
		}
		if withPrincipal && l.Principal != opts.Principal {
			t.Fatalf("asked for %s, logged in as %s", opts.Principal, l.Principal)
		}
		if !l.Expires.After(fuzzNow) {
			t.Fatalf("logged in with a TGT that expired at %s", l.Expires)
		}
		if l.Source != "ticket cache "+path {
			t.Fatalf("source %q", l.Source)
		}
	})
}

// FuzzLoginKeytab writes arbitrary bytes as the keytab of
// alice@EXAMPLE.COM, and hands them over in memory too (what the AM reads
// from its credentials). The KDC is a closed port, so the only acceptable
// outcome is a *KerberosError, quickly; never a panic (the KDC exchange
// runs outside safeCall, on whatever the keytab held) or a hang.
func FuzzLoginKeytab(f *testing.F) {
	for _, e := range []struct {
		principal string
		etype     int32
	}{
		{"alice", etypeID.AES128_CTS_HMAC_SHA1_96},
		{"alice", etypeID.AES256_CTS_HMAC_SHA1_96},
		{"alice", etypeID.RC4_HMAC},
		{"bob", etypeID.AES128_CTS_HMAC_SHA1_96},
		{"nn/host.example.com", etypeID.AES256_CTS_HMAC_SHA384_192},
	} {
		kt := keytab.New()
		if err := kt.AddEntry(e.principal, "EXAMPLE.COM", "secret-password", fuzzNow, 3, e.etype); err != nil {
			f.Fatal(err)
		}
		b, err := kt.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	if b := clusterFile("alice.keytab"); b != nil {
		f.Add(b)
	}
	f.Add([]byte{0x05, 0x04, 0xff, 0xff, 0xff, 0xff, 1, 2})
	f.Add([]byte{0x05, 0x02})

	f.Fuzz(func(t *testing.T, kt []byte) {
		path := filepath.Join(t.TempDir(), "user.keytab")
		if err := os.WriteFile(path, kt, 0o600); err != nil {
			t.Fatal(err)
		}
		opts := KerberosOptions{
			Krb5Conf:  writeKrb5Conf(t, closedPort(t)),
			Keytab:    path,
			Principal: "alice@EXAMPLE.COM",
			Getenv:    func(string) string { return "" },
			Now:       func() time.Time { return fuzzNow },
			Timeout:   2 * time.Second,
		}
		start := time.Now()
		l, err := loginBounded(t, opts)
		checkKerberosResult(t, l, err)
		if err == nil {
			t.Fatalf("logged in as %s with the KDC on a closed port", l.Principal)
		}
		if d := time.Since(start); d > opts.Timeout+time.Second {
			t.Fatalf("login took %s, Timeout is %s", d, opts.Timeout)
		}
		if strings.Contains(err.Error(), "secret-password") {
			t.Fatalf("error %q shows the password", err)
		}

		opts.Keytab, opts.KeytabData, opts.KeytabSource = "", kt, "from the AM's credentials"
		if opts.KeytabData == nil {
			opts.KeytabData = []byte{}
		}
		start = time.Now()
		l, err = loginBounded(t, opts)
		checkKerberosResult(t, l, err)
		if err == nil {
			t.Fatalf("logged in as %s from memory with the KDC on a closed port", l.Principal)
		}
		if d := time.Since(start); d > opts.Timeout+time.Second {
			t.Fatalf("login from memory took %s, Timeout is %s", d, opts.Timeout)
		}
	})
}

// TestSyntheticCCacheLogsIn keeps FuzzLoginCCache's main seed honest: it is
// a cache LoginKerberos accepts, so the fuzzer starts from the success path.
func TestSyntheticCCacheLogsIn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "krb5cc")
	if err := os.WriteFile(path, syntheticCCache(t, 2), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := LoginKerberos(context.Background(), KerberosOptions{
		Krb5Conf: writeKrb5Conf(t, closedPort(t)), CCache: path, Principal: "alice",
		Getenv: func(string) string { return "" }, Now: func() time.Time { return fuzzNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	if l.Principal != "alice@EXAMPLE.COM" || !l.Expires.Equal(fuzzNow.Add(9*time.Hour)) {
		t.Fatalf("login %s until %s", l.Principal, l.Expires)
	}
	if _, err := LoginKerberos(context.Background(), KerberosOptions{
		Krb5Conf: writeKrb5Conf(t, closedPort(t)), CCache: path,
		Getenv: func(string) string { return "" }, Now: func() time.Time { return fuzzNow.Add(10 * time.Hour) },
	}); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired TGT: %v", err)
	}
}
