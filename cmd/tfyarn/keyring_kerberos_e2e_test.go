//go:build e2e && linux

package main

import (
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// TestE2EKerberosKeyringCCache: after MIT's kinit into a kernel keyring
// (KRB5CCNAME=KEYRING:session:...), tfyarn run, status and list work from
// that ticket alone; with KRB5CCNAME unset, krb5.conf's default_ccache_name
// names the keyring cache (as RHEL's KEYRING:persistent:%{uid} does); a
// keyring cache that does not exist and a KCM cache are one line each,
// exit code 2, before anything is submitted.
//
//	go test -tags e2e -run E2EKerberosKeyring ./cmd/tfyarn/
func TestE2EKerberosKeyringCCache(t *testing.T) {
	c := clustertest.RequireKerberos(t)
	bin := clustertest.BuildTfyarn(t)
	k := c.Kerberos
	coll := "tfyarn-e2e-" + randomHex(t)
	ccname := "KEYRING:session:" + coll
	kinitKeyringE2E(t, c, ccname, coll)
	env := []string{"KRB5CCNAME=" + ccname}

	name := "e2e-krb-keyring-" + randomHex(t)
	stdout, stderr, code := execTfyarn(t, c, bin, env, "run", "--worker", "1c,256m", "--name", name, "--output", "json", "--", "sh", "-c", "exit 0")
	require.Equal(t, exitOK, code, stderr)
	r := runJSON(t, stdout)
	require.Equal(t, "SUCCEEDED", r.FinalStatus)
	out, stderr, code := execTfyarn(t, c, bin, env, "status", r.AppID, "--output", "json")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, out, `"user": "alice"`)
	require.Contains(t, out, `"final_status": "SUCCEEDED"`)
	out, stderr, code = execTfyarn(t, c, bin, env, "list", "--state", "FINISHED")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, out, r.AppID)
	requireNoKerberosStaging(t, c, r.AppID)

	// KRB5CCNAME unset ("" is unset to tfyarn): default_ccache_name decides.
	base, err := os.ReadFile(k.Krb5Config)
	require.NoError(t, err)
	conf := filepath.Join(t.TempDir(), "krb5.conf")
	text := strings.Replace(string(base), "[libdefaults]\n", "[libdefaults]\n  default_ccache_name = "+ccname+"\n", 1)
	require.NoError(t, os.WriteFile(conf, []byte(text), 0o600))
	out, stderr, code = execTfyarn(t, c, bin, []string{"KRB5CCNAME=", "KRB5_CONFIG=" + conf}, "list", "--state", "FINISHED")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, out, r.AppID)

	me, err := user.Current()
	require.NoError(t, err)
	t.Run("as the Unix user alice with RHEL's default_ccache_name", func(t *testing.T) {
		testKeyringPersistentAsUser(t, c, bin, r.AppID)
	})

	absent := "KEYRING:session:tfyarn-e2e-absent-" + randomHex(t)
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"KRB5CCNAME=" + absent}, "tfyarn: no Kerberos ticket for " + me.Username + " (no ticket cache " + absent + "); run kinit or pass --keytab\n"},
		{[]string{"KRB5CCNAME=KCM:"}, "tfyarn: the ticket cache KCM: is of type KCM, which tfyarn cannot read; use a file or kernel keyring cache (export KRB5CCNAME=FILE:/tmp/krb5cc_$(id -u) and run kinit again) or pass --keytab\n"},
	} {
		name := "e2e-krb-keyring-err-" + randomHex(t)
		stdout, stderr, code := execTfyarn(t, c, bin, tc.env, "run", "--worker", "1c,256m", "--name", name, "--", "true")
		require.Equal(t, exitUsage, code, "%v: %s", tc.env, stderr)
		require.Empty(t, stdout)
		require.Equal(t, tc.want, stderr)
		requireNoAppNamed(t, c, name)
	}
}

// kinitKeyringE2E runs MIT's kinit as alice (her keytab) into the keyring
// cache ccname, and at the end kdestroy and unlinks the collection keyring
// kinit left in the session keyring.
func kinitKeyringE2E(t *testing.T, c *clustertest.Cluster, ccname, collection string) {
	t.Helper()
	kinit, err := exec.LookPath("kinit")
	require.NoError(t, err, "MIT's kinit is not installed: apt-get install krb5-user (scripts/prereqs.sh test does)")
	run := func(path string, args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Env = c.Env("KRB5CCNAME=" + ccname)
		out, err := cmd.CombinedOutput()
		require.NoError(t, ctx.Err(), "%s did not end within 1m (KDC %s)", path, c.Kerberos.KDC)
		if err != nil {
			return &exec.Error{Name: path + ": " + strings.TrimSpace(string(out)), Err: err}
		}
		return nil
	}
	require.NoError(t, run(kinit, "-kt", c.Kerberos.Keytab, c.Kerberos.Principal))
	t.Cleanup(func() {
		if kdestroy, err := exec.LookPath("kdestroy"); err == nil {
			require.NoError(t, run(kdestroy))
		}
		id, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "keyring", "_krb_"+collection, 0)
		require.NoError(t, err, "kinit's collection keyring _krb_%s", collection)
		_, err = unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_SESSION_KEYRING, 0, 0)
		require.NoError(t, err)
	})
}

// testKeyringPersistentAsUser: the Unix user alice (not root: her own
// persistent keyring, possessed only through this process's keyring), with
// RHEL's krb5.conf line default_ccache_name = KEYRING:persistent:%{uid} and
// no KRB5CCNAME, runs kinit and then tfyarn list, which sees her job appID.
func testKeyringPersistentAsUser(t *testing.T, c *clustertest.Cluster, bin, appID string) {
	u, err := user.Lookup(c.User(t, clustertest.TestUser))
	require.NoError(t, err)
	uid, err := strconv.Atoi(u.Uid)
	require.NoError(t, err)
	gid, err := strconv.Atoi(u.Gid)
	require.NoError(t, err)

	// Her own copies of what she needs, in a directory she can read.
	// (t.TempDir's parent is root's alone, so a directory of its own.)
	dir, err := os.MkdirTemp("", "tfyarn-e2e-keyring-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	base, err := os.ReadFile(c.Kerberos.Krb5Config)
	require.NoError(t, err)
	conf := filepath.Join(dir, "krb5.conf")
	require.NoError(t, os.WriteFile(conf, []byte(strings.Replace(string(base), "[libdefaults]\n", "[libdefaults]\n  default_ccache_name = KEYRING:persistent:%{uid}\n", 1)), 0o644))
	keytab, err := os.ReadFile(c.Kerberos.Keytab)
	require.NoError(t, err)
	copies := map[string][]byte{"alice.keytab": keytab}
	confFiles, err := os.ReadDir(c.ConfDir)
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "conf"), 0o755))
	for _, f := range confFiles {
		if f.Type().IsRegular() {
			b, err := os.ReadFile(filepath.Join(c.ConfDir, f.Name()))
			require.NoError(t, err)
			copies[filepath.Join("conf", f.Name())] = b
		}
	}
	tfyarn, err := os.ReadFile(bin)
	require.NoError(t, err)
	copies["tfyarn"] = tfyarn
	for name, b := range copies {
		p := filepath.Join(dir, name)
		mode := os.FileMode(0o644)
		if name == "tfyarn" {
			mode = 0o755
		}
		if name == "alice.keytab" {
			mode = 0o600
		}
		require.NoError(t, os.WriteFile(p, b, mode))
		require.NoError(t, os.Chown(p, uid, gid))
	}

	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C", "HOME=" + dir, "KRB5_CONFIG=" + conf,
			"HADOOP_CONF_DIR=" + filepath.Join(dir, "conf"), "HADOOP_USER_NAME=" + u.Username}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		out, err := cmd.CombinedOutput()
		require.NoError(t, ctx.Err(), "%v as %s did not end within 2m", args, u.Username)
		require.NoError(t, err, "%v as %s: %s", args, u.Username, out)
		return string(out)
	}
	kinit, err := exec.LookPath("kinit")
	require.NoError(t, err, "MIT's kinit is not installed: apt-get install krb5-user (scripts/prereqs.sh test does)")
	run(kinit, "-kt", filepath.Join(dir, "alice.keytab"), c.Kerberos.Principal)
	t.Cleanup(func() {
		if kdestroy, err := exec.LookPath("kdestroy"); err == nil {
			run(kdestroy)
		}
	})
	require.Contains(t, run("klist"), "Ticket cache: KEYRING:persistent:"+u.Uid+":")
	out := run(filepath.Join(dir, "tfyarn"), "list", "--state", "FINISHED")
	require.Contains(t, out, appID)
}
