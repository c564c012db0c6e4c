//go:build e2e && linux

package security

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// kinitLimit bounds one kinit (or kdestroy, kswitch) against the test KDC.
const kinitLimit = time.Minute

// krb5Tool runs one of MIT's tools (Debian's krb5-user: scripts/prereqs.sh
// installs it) with the test realm's krb5.conf and the environment extra.
func krb5Tool(t *testing.T, k *clustertest.KerberosInfo, extra []string, tool string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	require.NoError(t, err, "MIT's %s is not installed: apt-get install krb5-user (scripts/prereqs.sh test does)", tool)
	ctx, cancel := context.WithTimeout(context.Background(), kinitLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = krb5ToolEnv(k, extra)
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "%s %s did not end within %s (KDC %s)", tool, strings.Join(args, " "), kinitLimit, k.KDC)
	require.NoError(t, err, "%s %s: %s", tool, strings.Join(args, " "), out)
	return string(out)
}

// krb5ToolEnv is this process's environment without its Kerberos
// variables (MIT takes a KRB5CCNAME set to "" as a cache named ""), then
// the test realm's krb5.conf and extra.
func krb5ToolEnv(k *clustertest.KerberosInfo, extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvKrb5CCName+"=") && !strings.HasPrefix(kv, EnvKrb5Config+"=") {
			env = append(env, kv)
		}
	}
	return append(append(env, EnvKrb5Config+"="+k.Krb5Config), extra...)
}

// kinitKeyring runs kinit into the KEYRING cache ccname (KRB5CCNAME; ""
// leaves it unset, for krb5.conf's default_ccache_name) and
// removes it at the end: kdestroy, then the collection keyring kinit left
// in anchor (MIT's kdestroy keeps it).
func kinitKeyring(t *testing.T, k *clustertest.KerberosInfo, ccname string, anchor int, collection string, keytab, principal string, args ...string) {
	t.Helper()
	var env []string
	if ccname != "" {
		env = []string{EnvKrb5CCName + "=" + ccname}
	}
	krb5Tool(t, k, env, "kinit", append(args, "-kt", keytab, principal)...)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), kinitLimit)
		defer cancel()
		cmd := exec.CommandContext(ctx, "kdestroy")
		cmd.Env = krb5ToolEnv(k, env)
		_ = cmd.Run() // an expired cache is already gone
		if anchor != 0 {
			if id, err := unix.KeyctlSearch(anchor, "keyring", keyringCollectionPrefix+collection, 0); err == nil {
				_, err = unix.KeyctlInt(unix.KEYCTL_UNLINK, id, anchor, 0, 0)
				require.NoError(t, err, "unlinking the collection %s", collection)
			}
			_, err := unix.KeyctlSearch(anchor, "keyring", keyringCollectionPrefix+collection, 0)
			require.ErrorIs(t, err, unix.ENOKEY, "the collection %s is still there", collection)
		}
	})
}

// loginFromEnv logs in as tfyarn does, from the ticket cache that env
// (KRB5CCNAME, KRB5_CONFIG) names, and gets a service ticket with it from
// the real KDC.
func loginFromEnv(t *testing.T, k *clustertest.KerberosInfo, env map[string]string) (*KerberosLogin, error) {
	t.Helper()
	env[EnvKrb5Config] = k.Krb5Config
	l, err := LoginKerberos(t.Context(), KerberosOptions{Getenv: envOf(env)})
	if err != nil {
		return nil, err
	}
	service := strings.TrimSuffix(k.ServicePrincipal, "@"+k.Realm)
	_, _, err = l.Client.GetServiceTicket(service)
	require.NoError(t, err, "a service ticket for %s from %s", service, l.Source)
	return l, nil
}

// TestKerberosKeyringKinit: what MIT's kinit writes into kernel keyrings
// (session, user, persistent and legacy anchors; a collection's primary
// cache and a named one; kswitch changing the primary) is a login as the
// user it names, usable with the real KDC; a process keyring cache is no
// ticket for any other program; a cache whose tickets ended is expired;
// and with KRB5CCNAME unset, krb5.conf's default_ccache_name picks the
// cache, as on RHEL.
func TestKerberosKeyringKinit(t *testing.T) {
	c := clustertest.RequireKerberos(t)
	k := c.Kerberos
	bobKeytab, bob := k.Bob.Keytab, k.Bob.Principal

	t.Run("session collection", func(t *testing.T) {
		coll := "tfyarn-" + randomName(t)
		kinitKeyring(t, k, "KEYRING:session:"+coll, unix.KEY_SPEC_SESSION_KEYRING, coll, k.Keytab, k.Principal)
		before := time.Now()
		l, err := loginFromEnv(t, k, map[string]string{EnvKrb5CCName: "KEYRING:session:" + coll})
		require.NoError(t, err)
		require.Equal(t, k.Principal, l.Principal)
		require.Equal(t, "ticket cache KEYRING:session:"+coll+":"+coll, l.Source)
		require.WithinDuration(t, before.Add(24*time.Hour), l.Expires, 5*time.Minute, "ticket_lifetime = 24h")

		// bob's cache beside it in the same collection: named, it is bob's;
		// the collection still means its primary (alice's) until kswitch.
		sub := "bob-" + randomName(t)
		kinitKeyring(t, k, "KEYRING:session:"+coll+":"+sub, 0, "", bobKeytab, bob)
		l, err = loginFromEnv(t, k, map[string]string{EnvKrb5CCName: "KEYRING:session:" + coll + ":" + sub})
		require.NoError(t, err)
		require.Equal(t, bob, l.Principal)
		l, err = loginFromEnv(t, k, map[string]string{EnvKrb5CCName: "KEYRING:session:" + coll})
		require.NoError(t, err)
		require.Equal(t, k.Principal, l.Principal)
		krb5Tool(t, k, nil, "kswitch", "-c", "KEYRING:session:"+coll+":"+sub)
		l, err = loginFromEnv(t, k, map[string]string{EnvKrb5CCName: "KEYRING:session:" + coll})
		require.NoError(t, err)
		require.Equal(t, bob, l.Principal, "after kswitch the primary cache is bob's")
		require.Equal(t, "ticket cache KEYRING:session:"+coll+":"+sub, l.Source)
	})

	t.Run("user keyring", func(t *testing.T) {
		coll := "tfyarn-" + randomName(t)
		kinitKeyring(t, k, "KEYRING:user:"+coll, unix.KEY_SPEC_USER_KEYRING, coll, bobKeytab, bob)
		l, err := loginFromEnv(t, k, map[string]string{EnvKrb5CCName: "KEYRING:user:" + coll})
		require.NoError(t, err)
		require.Equal(t, bob, l.Principal)
	})

	t.Run("legacy name", func(t *testing.T) {
		coll := "tfyarn-" + randomName(t)
		kinitKeyring(t, k, "KEYRING:"+coll, unix.KEY_SPEC_SESSION_KEYRING, coll, k.Keytab, k.Principal)
		l, err := loginFromEnv(t, k, map[string]string{EnvKrb5CCName: "KEYRING:" + coll})
		require.NoError(t, err)
		require.Equal(t, "ticket cache KEYRING:legacy:"+coll+":"+coll, l.Source)
	})

	t.Run("persistent from default_ccache_name", func(t *testing.T) {
		// RHEL's krb5.conf says KEYRING:persistent:%{uid}; a named cache in
		// that collection keeps this test off the user's primary cache.
		sub := "tfyarn-" + randomName(t)
		base, err := os.ReadFile(k.Krb5Config)
		require.NoError(t, err)
		conf := filepath.Join(t.TempDir(), "krb5.conf")
		text := strings.Replace(string(base), "[libdefaults]\n", "[libdefaults]\n  default_ccache_name = KEYRING:persistent:%{uid}:"+sub+"\n", 1)
		require.Contains(t, text, "default_ccache_name")
		require.NoError(t, os.WriteFile(conf, []byte(text), 0o600))
		kc := *k
		kc.Krb5Config = conf
		kinitKeyring(t, &kc, "", 0, "", k.Keytab, k.Principal) // KRB5CCNAME unset: kinit uses the same default
		l, err := loginFromEnv(t, &kc, map[string]string{})
		require.NoError(t, err)
		require.Equal(t, k.Principal, l.Principal)
		require.Equal(t, fmt.Sprintf("ticket cache KEYRING:persistent:%d:%s", os.Getuid(), sub), l.Source)
	})

	t.Run("process keyring", func(t *testing.T) {
		coll := "tfyarn-" + randomName(t)
		kinitKeyring(t, k, "KEYRING:process:"+coll, 0, "", k.Keytab, k.Principal)
		_, err := loginFromEnv(t, k, map[string]string{EnvKrb5CCName: "KEYRING:process:" + coll})
		require.ErrorContains(t, err, "(no ticket cache KEYRING:process:"+coll+": a process keyring belongs to the process that ran kinit, so no other program sees it; use KEYRING:session: or KEYRING:persistent:); run kinit or pass --keytab")
	})

	t.Run("expired", func(t *testing.T) {
		coll := "tfyarn-" + randomName(t)
		kinitKeyring(t, k, "KEYRING:session:"+coll, unix.KEY_SPEC_SESSION_KEYRING, coll, k.Keytab, k.Principal, "-l", "3s")
		deadline := time.Now().Add(30 * time.Second)
		var err error
		for {
			_, err = loginFromEnv(t, k, map[string]string{EnvKrb5CCName: "KEYRING:session:" + coll})
			var ke *KerberosError
			if errors.As(err, &ke) && strings.Contains(ke.Op, "has expired") {
				break
			}
			require.True(t, time.Now().Before(deadline), "a 3 s ticket's cache still reads as %v after 30 s", err)
			time.Sleep(250 * time.Millisecond)
		}
		require.EqualError(t, err, "the Kerberos ticket cache KEYRING:session:"+coll+":"+coll+
			" has expired (the kernel removes a cache keyring when its tickets end); run kinit again or pass --keytab")
	})
}
