package security

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestClaimsCCacheDefaultPath: README "the ticket cache kinit wrote
// (KRB5CCNAME, else /tmp/krb5cc_<uid>; FILE: caches only)".
func TestClaimsCCacheDefaultPath(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, fmt.Sprintf("/tmp/krb5cc_%d", os.Getuid())},
		{map[string]string{EnvKrb5CCName: "FILE:/tmp/alice.cc"}, "/tmp/alice.cc"},
		{map[string]string{EnvKrb5CCName: "/tmp/bob.cc"}, "/tmp/bob.cc"},
	} {
		got, err := ccachePath(KerberosOptions{Getenv: envOf(c.env)})
		require.NoError(t, err, "%v", c.env)
		require.Equal(t, c.want, got, "%v", c.env)
	}
	_, err := ccachePath(KerberosOptions{Getenv: envOf(map[string]string{EnvKrb5CCName: "KCM:"})})
	require.ErrorContains(t, err, "is of type KCM")
}

// TestClaimsKrb5ConfDefault: README "krb5.conf from KRB5_CONFIG, else
// /etc/krb5.conf".
func TestClaimsKrb5ConfDefault(t *testing.T) {
	require.Equal(t, "/etc/krb5.conf", DefaultKrb5Config)

	missing := filepath.Join(t.TempDir(), "krb5.conf")
	_, err := loadKrb5Conf(KerberosOptions{Getenv: envOf(map[string]string{EnvKrb5Config: missing})})
	require.ErrorContains(t, err, "no Kerberos configuration at "+missing+" (from "+EnvKrb5Config+")")

	// Without KRB5_CONFIG the default location is read: named in the
	// error when it is absent, loaded when it is there.
	_, err = loadKrb5Conf(KerberosOptions{Getenv: envOf(nil)})
	if _, statErr := os.Stat("/etc/krb5.conf"); statErr != nil {
		require.ErrorContains(t, err, "no Kerberos configuration at /etc/krb5.conf (from the default location)")
	} else if err != nil {
		require.ErrorContains(t, err, "/etc/krb5.conf")
	}
}
