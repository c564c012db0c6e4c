package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runCLI runs tfyarn in-process, as a user would from a shell.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"tfyarn"}, args...), &out, &errb)
	return out.String(), errb.String(), code
}

// deadConf writes a configuration naming an RM address nobody listens on.
func deadConf(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte(
		`<configuration><property><name>yarn.resourcemanager.address</name><value>127.0.0.1:1</value></property></configuration>`), 0o644))
	return dir
}

func TestUsageErrors(t *testing.T) {
	conf := deadConf(t) // usage errors must come before any RPC
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status"}, "status needs exactly one application id"},
		{[]string{"status", "a", "b"}, "status needs exactly one application id"},
		{[]string{"status", "app_1"}, `malformed application id "app_1": expected application_<clusterTimestamp>_<sequence>`},
		{[]string{"kill", "application_x_1"}, `malformed application id "application_x_1"`},
		{[]string{"status", "application_1_0001", "--output", "xml"}, `--output "xml": expected table or json`},
		{[]string{"status", "--nope", "application_1_0001"}, "flag provided but not defined: -nope; see 'tfyarn status --help'"},
		{[]string{"status", "application_1_0001", "--nope"}, "flag provided but not defined: --nope"},
		{[]string{"list", "extra"}, `list takes no arguments, got "extra"`},
		{[]string{"list", "--state", "weird"}, `--state "weird": expected one of`},
		{[]string{"cluster", "--output", "yaml"}, `--output "yaml": expected table or json`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"--timeout", "soon", "list"}, "invalid value"},
		{[]string{"--nope"}, "flag provided but not defined: -nope; see 'tfyarn --help'"},
		{[]string{"cache", "init", "--nope", "/x"}, "flag provided but not defined: -nope; see 'tfyarn cache init --help'"},
		{[]string{"cache", "--nope"}, "flag provided but not defined: -nope; see 'tfyarn cache --help'"},
		{[]string{"version", "--output", "xml"}, `--output "xml": expected table or json`},
		{[]string{"version", "extra"}, `version takes no arguments, got "extra"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{"--conf-dir", conf}, tc.args...)...)
			require.Equal(t, exitUsage, code)
			require.Empty(t, stdout)
			require.True(t, strings.HasPrefix(stderr, "tfyarn: "), stderr)
			require.Contains(t, stderr, tc.want)
			require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			require.NotContains(t, stderr, "goroutine")
		})
	}
}

func TestConfDirErrors(t *testing.T) {
	_, stderr, code := runCLI(t, "--conf-dir", "/nonexistent/tfyarn", "list")
	require.Equal(t, exitUsage, code)
	require.Equal(t, "tfyarn: --conf-dir /nonexistent/tfyarn is not a directory; point it at the directory holding core-site.xml and yarn-site.xml\n", stderr)

	t.Setenv("HADOOP_CONF_DIR", "")
	t.Setenv("HADOOP_HOME", "")
	_, stderr, code = runCLI(t, "list")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "HADOOP_CONF_DIR is not set")
}

func TestUnreachableIsOneLine(t *testing.T) {
	conf := deadConf(t)
	_, stderr, code := runCLI(t, "--conf-dir", conf, "status", "application_1_0001")
	require.Equal(t, exitUsage, code)
	require.Equal(t, "tfyarn: cannot reach the ResourceManager at 127.0.0.1:1 (from --conf-dir="+conf+
		"): connection refused; is the cluster up and HADOOP_CONF_DIR right?\n", stderr)
}

func TestHelpShowsExamples(t *testing.T) {
	stdout, _, code := runCLI(t, "--help")
	require.Equal(t, exitOK, code)
	require.Contains(t, stdout, "tfyarn status application_1700000000000_0001")
	require.Contains(t, stdout, "Exit codes: 0 success, 1 the job failed")
	for _, cmd := range []string{"list", "status", "kill", "cluster"} {
		stdout, _, code := runCLI(t, cmd, "--help")
		require.Equal(t, exitOK, code, cmd)
		require.Contains(t, stdout, "tfyarn "+cmd+" ", cmd)
		require.Contains(t, stdout, "OPTIONS:", cmd+" help")
	}
}

func TestPositionalAppliesTrailingFlags(t *testing.T) {
	// Parsing works even after the id: the output error proves --output was read.
	_, stderr, _ := runCLI(t, "--conf-dir", deadConf(t), "status", "application_1_0001", "-o=bogus")
	require.Contains(t, stderr, `--output "bogus"`)
}

// An RM that takes the connection and never answers: the one-line error
// names the limit and the flag that raises it as it must be given, the
// global --timeout before the command (run's own --timeout is the job's
// lifetime, which would not help); given so, it is the limit applied.
func TestRMTimeoutHintNamesTheGlobalFlag(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	held := make(chan net.Conn, 16)
	defer func() {
		ln.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			select {
			case held <- c: // never answered
			default:
				c.Close()
			}
		}
	}()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "yarn-site.xml"), []byte(
		`<configuration><property><name>yarn.resourcemanager.address</name><value>`+ln.Addr().String()+`</value></property></configuration>`), 0o644))
	start := time.Now()
	_, stderr, code := runCLI(t, "--conf-dir", dir, "--timeout", "1500ms", "list")
	require.Equal(t, exitUsage, code, stderr)
	require.Less(t, time.Since(start), 20*time.Second)
	require.Contains(t, stderr, "did not answer within 1.5s")
	require.Contains(t, stderr, "(raise the limit with tfyarn --timeout DURATION before the command)")
	require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
}

// TestAuthToLocalErrorsAreOneLine: auth_to_local rules Hadoop would refuse,
// or that tfyarn cannot evaluate as Java does, are one line naming the
// setting, its file and the rule, exit code 2, before any login or RPC.
func TestAuthToLocalErrorsAreOneLine(t *testing.T) {
	for _, tc := range []struct{ rules, mechanism, want string }{
		{`RULE:[1:$1@$0](.*@CORP\.COM)s/@.*//` + "\n  RULE:[2:$1]s/(a)\\1/x/\n  DEFAULT", "",
			`core-site.xml): auth_to_local rule "RULE:[2:$1]s/(a)\\1/x/": s/(a)\1/: \1 is a backreference or an octal escape in Java; RE2 has neither; fix the rule`},
		{`RULE:[1:$1]s/a/b`, "", `auth_to_local rule "s/a/b": not DEFAULT nor RULE:[n:format](regex)s/pattern/replacement/[g][/L] (Hadoop: Invalid rule); it follows the rule "RULE:[1:$1]", whose s/pattern/replacement/ needs its three '/'`},
		{`DEFAULT`, "kerberos", `hadoop.security.auth_to_local.mechanism = "kerberos" is neither hadoop nor mit`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			dir := deadConf(t)
			core := `<configuration>
<property><name>hadoop.security.authentication</name><value>kerberos</value></property>
<property><name>hadoop.security.auth_to_local</name><value>` + tc.rules + `</value></property>
<property><name>hadoop.security.auth_to_local.mechanism</name><value>` + tc.mechanism + `</value></property>
</configuration>`
			require.NoError(t, os.WriteFile(filepath.Join(dir, "core-site.xml"), []byte(core), 0o644))
			t.Setenv("KRB5CCNAME", "FILE:/nonexistent/tfyarn-test-ccache")
			stdout, stderr, code := runCLI(t, "--conf-dir", dir, "list")
			require.Equal(t, exitUsage, code)
			require.Empty(t, stdout)
			require.True(t, strings.HasPrefix(stderr, "tfyarn: hadoop.security.auth_to_local"), stderr)
			require.Contains(t, stderr, tc.want)
			require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}
}
