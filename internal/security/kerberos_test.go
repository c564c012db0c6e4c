package security

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/errorcode"
	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/tfyarn/tfyarn/internal/authtolocal"
)

func writeKrb5Conf(t *testing.T, kdc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "krb5.conf")
	conf := fmt.Sprintf(`[libdefaults]
  default_realm = EXAMPLE.COM
  dns_lookup_kdc = false
  dns_lookup_realm = false
  udp_preference_limit = 1
  default_tkt_enctypes = aes128-cts-hmac-sha1-96
  default_tgs_enctypes = aes128-cts-hmac-sha1-96
  permitted_enctypes = aes128-cts-hmac-sha1-96
[realms]
  EXAMPLE.COM = {
    kdc = %s
  }
`, kdc)
	if err := os.WriteFile(p, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeKeytab(t *testing.T, principal string) string {
	t.Helper()
	kt := keytab.New()
	if err := kt.AddEntry(principal, "EXAMPLE.COM", "secret-password", time.Now(), 1, etypeID.AES128_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "user.keytab")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeKDC answers every request (over TCP, RFC 4120 framing) with a
// KRB-ERROR of the given code, or never answers when code is 0.
func fakeKDC(t *testing.T, code int32) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				var hdr [4]byte
				if _, err := io.ReadFull(c, hdr[:]); err != nil {
					return
				}
				n := binary.BigEndian.Uint32(hdr[:])
				if n > 1<<16 {
					return
				}
				if _, err := io.ReadFull(c, make([]byte, n)); err != nil {
					return
				}
				if code == 0 {
					time.Sleep(10 * time.Second)
					return
				}
				sname := types.PrincipalName{NameType: nametype.KRB_NT_SRV_INST, NameString: []string{"krbtgt", "EXAMPLE.COM"}}
				ke := messages.NewKRBError(sname, "EXAMPLE.COM", code, "")
				b, err := ke.Marshal()
				if err != nil {
					return
				}
				binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
				c.Write(append(hdr[:], b...))
			}(c)
		}
	}()
	return ln.Addr().String()
}

func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestLoginKerberosErrors(t *testing.T) {
	noEnv := func(string) string { return "" }
	ktAlice := writeKeytab(t, "alice")
	garbage := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(garbage, []byte{0x05, 0x04, 0xff, 0xff, 0xff, 0xff, 1, 2}, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts func() KerberosOptions
		want []string
	}{
		{"no krb5.conf", func() KerberosOptions {
			return KerberosOptions{Krb5Conf: "/nonexistent/krb5.conf", Getenv: noEnv}
		}, []string{"no Kerberos configuration at /nonexistent/krb5.conf"}},
		{"no ticket cache", func() KerberosOptions {
			return KerberosOptions{Krb5Conf: writeKrb5Conf(t, closedPort(t)), CCache: "/nonexistent/cc", Principal: "alice@EXAMPLE.COM", Getenv: noEnv}
		}, []string{"no Kerberos ticket for alice@EXAMPLE.COM", "run kinit or pass --keytab"}},
		{"KRB5CCNAME names a KCM cache", func() KerberosOptions {
			env := func(k string) string {
				if k == EnvKrb5CCName {
					return "KCM:0"
				}
				return ""
			}
			return KerberosOptions{Krb5Conf: writeKrb5Conf(t, closedPort(t)), Getenv: env}
		}, []string{"the ticket cache KCM:0 is of type KCM, which tfyarn cannot read", "pass --keytab"}},
		{"no keyring cache", func() KerberosOptions {
			return KerberosOptions{Krb5Conf: writeKrb5Conf(t, closedPort(t)), CCache: "KEYRING:session:tfyarn-absent-" + randomName(t), Getenv: noEnv}
		}, []string{"no Kerberos ticket for ", "(no ticket cache KEYRING:session:tfyarn-absent-", "run kinit or pass --keytab"}},
		{"corrupt ticket cache", func() KerberosOptions {
			return KerberosOptions{Krb5Conf: writeKrb5Conf(t, closedPort(t)), CCache: "FILE:" + garbage, Getenv: noEnv}
		}, []string{"reading the ticket cache " + garbage}},
		{"keytab without the principal", func() KerberosOptions {
			return KerberosOptions{Krb5Conf: writeKrb5Conf(t, closedPort(t)), Principal: "bob@EXAMPLE.COM", Keytab: ktAlice, Getenv: noEnv}
		}, []string{"keytab " + ktAlice + " has no key for bob@EXAMPLE.COM"}},
		{"keytab that is not one", func() KerberosOptions {
			return KerberosOptions{Krb5Conf: writeKrb5Conf(t, closedPort(t)), Principal: "alice", Keytab: garbage, Getenv: noEnv}
		}, []string{"reading keytab " + garbage}},
		{"keytab in memory without the principal", func() KerberosOptions {
			data, err := os.ReadFile(ktAlice)
			if err != nil {
				t.Fatal(err)
			}
			return KerberosOptions{Krb5Conf: writeKrb5Conf(t, closedPort(t)), Principal: "bob@EXAMPLE.COM", KeytabData: data, KeytabSource: "from the AM's credentials", Getenv: noEnv}
		}, []string{"keytab from the AM's credentials has no key for bob@EXAMPLE.COM"}},
		{"keytab in memory that is not one", func() KerberosOptions {
			return KerberosOptions{Krb5Conf: writeKrb5Conf(t, closedPort(t)), Principal: "alice", KeytabData: []byte{0x05, 0x04, 0xff, 0xff, 0xff, 0xff, 1, 2}, KeytabSource: "from the AM's credentials", Getenv: noEnv}
		}, []string{"reading keytab from the AM's credentials"}},
		{"keytab in memory, KDC down", func() KerberosOptions {
			data, err := os.ReadFile(ktAlice)
			if err != nil {
				t.Fatal(err)
			}
			return KerberosOptions{Krb5Conf: writeKrb5Conf(t, closedPort(t)), Principal: "alice", KeytabData: data, Getenv: noEnv}
		}, []string{"cannot reach the KDC for realm EXAMPLE.COM (kdc 127.0.0.1:"}},
		{"KDC down", func() KerberosOptions {
			return KerberosOptions{Krb5Conf: writeKrb5Conf(t, closedPort(t)), Principal: "alice", Keytab: ktAlice, Getenv: noEnv}
		}, []string{"cannot reach the KDC for realm EXAMPLE.COM (kdc 127.0.0.1:"}},
		{"KDC silent", func() KerberosOptions {
			return KerberosOptions{Krb5Conf: writeKrb5Conf(t, fakeKDC(t, 0)), Principal: "alice", Keytab: ktAlice, Getenv: noEnv, Timeout: 500 * time.Millisecond}
		}, []string{"the KDC for realm EXAMPLE.COM (kdc 127.0.0.1:", "did not answer within 500ms"}},
		{"clock skew", func() KerberosOptions {
			return KerberosOptions{Krb5Conf: writeKrb5Conf(t, fakeKDC(t, errorcode.KRB_AP_ERR_SKEW)), Principal: "alice", Keytab: ktAlice, Getenv: noEnv}
		}, []string{"clock differs too much from the KDC's", "NTP"}},
		{"unknown principal", func() KerberosOptions {
			return KerberosOptions{Krb5Conf: writeKrb5Conf(t, fakeKDC(t, errorcode.KDC_ERR_C_PRINCIPAL_UNKNOWN)), Principal: "alice", Keytab: ktAlice, Getenv: noEnv}
		}, []string{"does not know alice@EXAMPLE.COM"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoginKerberos(context.Background(), tc.opts())
			var ke *KerberosError
			if !errors.As(err, &ke) {
				t.Fatalf("err = %v (%T), want a *KerberosError", err, err)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, "secret-password") {
				t.Errorf("error %q is not one clean line", msg)
			}
		})
	}
}

// TestLoginMapsUser: a login's User is its principal mapped by the
// cluster's auth_to_local rules (DEFAULT when none are given), and a
// principal they do not map is a one-line error naming it and the setting.
func TestLoginMapsUser(t *testing.T) {
	ccache := filepath.Join(t.TempDir(), "krb5cc")
	if err := os.WriteFile(ccache, syntheticCCache(t, 2), 0o600); err != nil {
		t.Fatal(err)
	}
	krb5 := writeKrb5Conf(t, closedPort(t))
	otherRealm := filepath.Join(t.TempDir(), "krb5-other.conf")
	b, err := os.ReadFile(krb5)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(otherRealm, []byte(strings.Replace(string(b), "default_realm = EXAMPLE.COM", "default_realm = OTHER.COM", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	parse := func(text string) *authtolocal.Rules {
		r, err := authtolocal.Parse(text, authtolocal.MechanismHadoop)
		if err != nil {
			t.Fatal(err)
		}
		r.Source = "hadoop.security.auth_to_local from core-site.xml"
		return r
	}
	for _, tc := range []struct {
		name     string
		krb5     string
		rules    *authtolocal.Rules
		want     string
		wantErrs []string
	}{
		{name: "no rules: DEFAULT", krb5: krb5, want: "alice"},
		{name: "a rule renames", krb5: krb5, rules: parse(`RULE:[1:$1@$0](alice@EXAMPLE\.COM)s/@.*/-ml/` + "\n DEFAULT"), want: "alice-ml"},
		{name: "lower case", krb5: krb5, rules: parse(`RULE:[1:$1]s/a/A/g/L`), want: "alice"},
		{name: "DEFAULT in another default realm", krb5: otherRealm,
			wantErrs: []string{"no auth_to_local rule maps the principal alice@EXAMPLE.COM", "hadoop.security.auth_to_local is unset: DEFAULT", "add a rule for it"}},
		{name: "no rule applies", krb5: krb5, rules: parse(`RULE:[2:$1]`),
			wantErrs: []string{"no auth_to_local rule maps the principal alice@EXAMPLE.COM", "from core-site.xml"}},
		{name: "a non-simple result", krb5: krb5, rules: parse(`RULE:[1:$1@$0]`),
			wantErrs: []string{"RULE:[1:$1@$0] cannot map the principal alice@EXAMPLE.COM", "holds '/' or '@'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := LoginKerberos(context.Background(), KerberosOptions{
				Krb5Conf: tc.krb5, CCache: ccache, AuthToLocal: tc.rules,
				Getenv: func(string) string { return "" }, Now: func() time.Time { return fuzzNow },
			})
			if tc.wantErrs == nil {
				if err != nil || l.User != tc.want {
					t.Fatalf("want user %q, got %+v, %v", tc.want, l, err)
				}
				return
			}
			var ke *KerberosError
			if !errors.As(err, &ke) {
				t.Fatalf("want a KerberosError, got %+v, %v", l, err)
			}
			for _, want := range tc.wantErrs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
		})
	}
}
