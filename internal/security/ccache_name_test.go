package security

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestExpandCCacheTokens: the %{...} tokens of default_ccache_name that
// RHEL (KEYRING:persistent:%{uid}) and others use, expanded as MIT does.
func TestExpandCCacheTokens(t *testing.T) {
	me, err := user.LookupId(strconv.Itoa(os.Geteuid()))
	require.NoError(t, err)
	uid, euid := strconv.Itoa(os.Getuid()), strconv.Itoa(os.Geteuid())
	env := envOf(map[string]string{"TMPDIR": "/scratch"})
	for in, want := range map[string]string{
		"KEYRING:persistent:%{uid}":       "KEYRING:persistent:" + uid,
		"FILE:/tmp/krb5cc_%{USERID}":      "FILE:/tmp/krb5cc_" + uid,
		"FILE:%{TEMP}/krb5cc_%{euid}":     "FILE:/scratch/krb5cc_" + euid,
		"KEYRING:user:%{username}%{null}": "KEYRING:user:" + me.Username,
		"FILE:/plain":                     "FILE:/plain",
	} {
		got, err := expandCCacheTokens(in, env)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	got, err := expandCCacheTokens("FILE:%{TEMP}/cc", envOf(nil))
	require.NoError(t, err)
	require.Equal(t, "FILE:/tmp/cc", got)
	_, err = expandCCacheTokens("FILE:%{LIBDIR}/cc", env)
	require.EqualError(t, err, "tfyarn does not know the token %{LIBDIR}")
	_, err = expandCCacheTokens("FILE:%{uid", env)
	require.EqualError(t, err, "a %{ without its }")
}

// TestProfileDefaultCCacheName: default_ccache_name is found in
// [libdefaults] only, through include and includedir (RHEL 8's
// /etc/krb5.conf.d/kcm_default_ccache), first value winning.
func TestProfileDefaultCCacheName(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	plain := write("plain.conf", "[libdefaults]\n default_realm = EXAMPLE.COM\n[realms]\n default_ccache_name = FILE:/wrong-section\n")
	v, err := profileDefaultCCacheName(plain)
	require.NoError(t, err)
	require.Equal(t, "", v)

	write("krb5.conf.d/kcm_default_ccache", "[libdefaults]\n    default_ccache_name = KCM:\n")
	write("krb5.conf.d/old.rpmsave", "[libdefaults]\n default_ccache_name = FILE:/ignored\n")
	rhel := write("rhel.conf", "includedir "+filepath.Join(dir, "krb5.conf.d")+"/\n\n[libdefaults]\n  default_ccache_name = KEYRING:persistent:%{uid}\n")
	v, err = profileDefaultCCacheName(rhel)
	require.NoError(t, err)
	require.Equal(t, "KCM:", v, "the included file comes first")

	inc := write("inc.conf", "# comment\n[libdefaults]\n default_ccache_name = \"KEYRING:session:%{uid}\" *\n")
	top := write("top.conf", "[libdefaults]\n default_realm = EXAMPLE.COM\ninclude "+inc+"\n")
	v, err = profileDefaultCCacheName(top)
	require.NoError(t, err)
	require.Equal(t, "KEYRING:session:%{uid}", v)

	loop := filepath.Join(dir, "loop.conf")
	write("loop.conf", "include "+loop+"\n")
	_, err = profileDefaultCCacheName(loop)
	require.ErrorContains(t, err, "includes nest deeper than 8")

	_, err = resolveCCacheName(KerberosOptions{Getenv: envOf(nil)}, write("bad.conf", "[libdefaults]\n default_ccache_name = FILE:%{LIBDIR}/x\n"))
	require.EqualError(t, err, "the ticket cache name FILE:%{LIBDIR}/x (from default_ccache_name in "+filepath.Join(dir, "bad.conf")+"): tfyarn does not know the token %{LIBDIR}; set KRB5CCNAME to the cache kinit writes")

	// A type tfyarn cannot read, from krb5.conf, says where it came from.
	_, err = openCCache(KerberosOptions{Getenv: envOf(nil)}, rhel, "alice")
	require.EqualError(t, err, "the ticket cache KCM: (from default_ccache_name in "+rhel+") is of type KCM, which tfyarn cannot read; use a file or kernel keyring cache (export KRB5CCNAME=FILE:/tmp/krb5cc_$(id -u) and run kinit again) or pass --keytab")
}
