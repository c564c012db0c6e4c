package security

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestClaimsCCacheDefaultPath: README "the ticket cache kinit wrote
// (KRB5CCNAME, else default_ccache_name of krb5.conf's [libdefaults], else
// /tmp/krb5cc_<uid>)"; a type tfyarn cannot read is one line naming it.
func TestClaimsCCacheDefaultPath(t *testing.T) {
	plain := filepath.Join(t.TempDir(), "krb5.conf")
	require.NoError(t, os.WriteFile(plain, []byte("[libdefaults]\n  default_realm = EXAMPLE.COM\n"), 0o600))
	rhel := filepath.Join(t.TempDir(), "krb5.conf")
	require.NoError(t, os.WriteFile(rhel, []byte("[libdefaults]\n  default_realm = EXAMPLE.COM\n  default_ccache_name = KEYRING:persistent:%{uid}\n"), 0o600))
	for _, c := range []struct {
		env  map[string]string
		conf string
		want string
	}{
		{nil, plain, fmt.Sprintf("FILE:/tmp/krb5cc_%d", os.Getuid())},
		{map[string]string{EnvKrb5CCName: "FILE:/tmp/alice.cc"}, plain, "FILE:/tmp/alice.cc"},
		{map[string]string{EnvKrb5CCName: "/tmp/bob.cc"}, plain, "FILE:/tmp/bob.cc"},
		{nil, rhel, fmt.Sprintf("KEYRING:persistent:%d", os.Getuid())},
		{map[string]string{EnvKrb5CCName: "FILE:/tmp/alice.cc"}, rhel, "FILE:/tmp/alice.cc"},
	} {
		got, err := resolveCCacheName(KerberosOptions{Getenv: envOf(c.env)}, c.conf)
		require.NoError(t, err, "%v", c.env)
		require.Equal(t, c.want, got.String(), "%v %s", c.env, c.conf)
	}
	for _, name := range []string{"KCM:", "DIR:/run/user/1000/krb5cc", "MEMORY:x", "API:x"} {
		_, err := openCCache(KerberosOptions{Getenv: envOf(map[string]string{EnvKrb5CCName: name})}, plain, "alice")
		kind, _, _ := strings.Cut(name, ":")
		require.EqualError(t, err, "the ticket cache "+name+" is of type "+kind+", which tfyarn cannot read; use a file or kernel keyring cache (export KRB5CCNAME=FILE:/tmp/krb5cc_$(id -u) and run kinit again) or pass --keytab")
	}
}

// TestClaimsKrb5ConfDefault: README "krb5.conf from KRB5_CONFIG, else
// /etc/krb5.conf".
func TestClaimsKrb5ConfDefault(t *testing.T) {
	require.Equal(t, "/etc/krb5.conf", DefaultKrb5Config)

	missing := filepath.Join(t.TempDir(), "krb5.conf")
	_, _, err := loadKrb5Conf(KerberosOptions{Getenv: envOf(map[string]string{EnvKrb5Config: missing})})
	require.ErrorContains(t, err, "no Kerberos configuration at "+missing+" (from "+EnvKrb5Config+")")

	// Without KRB5_CONFIG the default location is read: named in the
	// error when it is absent, loaded when it is there.
	_, _, err = loadKrb5Conf(KerberosOptions{Getenv: envOf(nil)})
	if _, statErr := os.Stat("/etc/krb5.conf"); statErr != nil {
		require.ErrorContains(t, err, "no Kerberos configuration at /etc/krb5.conf (from the default location)")
	} else if err != nil {
		require.ErrorContains(t, err, "/etc/krb5.conf")
	}
}
