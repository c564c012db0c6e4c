//go:build e2e

package security

import (
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// credentialsTool runs testcluster's CredentialsTool (real Hadoop 3.4.2
// code). Missing Java or an unbuilt testcluster fails the test: the e2e
// suite exists to prove interop, so skipping would hide a broken setup.
func credentialsTool(t *testing.T, args ...string) string {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("e2e: no 'java' on PATH (install JDK 17), then run `bash testcluster/build.sh`: %v", err)
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	cpFile := filepath.Join(root, "testcluster", "target", "classpath.txt")
	deps, err := os.ReadFile(cpFile)
	if err != nil {
		t.Fatalf("e2e: testcluster is not built (%v); run `bash testcluster/build.sh`", err)
	}
	classes := filepath.Join(root, "testcluster", "target", "classes")
	if _, err := os.Stat(filepath.Join(classes, "dev", "tfyarn", "testcluster", "CredentialsTool.class")); err != nil {
		t.Fatalf("e2e: CredentialsTool.class missing (%v); run `bash testcluster/build.sh`", err)
	}
	cmd := exec.Command(java, append([]string{
		"-cp", classes + string(os.PathListSeparator) + strings.TrimSpace(string(deps)),
		"dev.tfyarn.testcluster.CredentialsTool",
	}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("CredentialsTool %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

// dumpLines renders c the way CredentialsTool dump does.
func dumpLines(c *Credentials) []string {
	var lines []string
	for _, e := range c.Tokens() {
		lines = append(lines, strings.Join([]string{"token", e.Alias, e.Token.Kind, e.Token.Service,
			hex.EncodeToString(e.Token.Identifier), hex.EncodeToString(e.Token.Password)}, "\t"))
	}
	for _, a := range c.SecretAliases() {
		k, _ := c.Secret(a)
		lines = append(lines, strings.Join([]string{"secret", a, hex.EncodeToString(k)}, "\t"))
	}
	sort.Strings(lines)
	return lines
}

func TestHadoopWritesGoReads(t *testing.T) {
	want := fixtureCredentials()
	for _, v := range []string{"v0", "v1"} {
		t.Run(v, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "creds-"+v)
			credentialsTool(t, "write", path, v)
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, map[string]byte{"v0": 0, "v1": 1}[v], raw[4], "version byte")

			got, err := ReadCredentialsFile(path)
			require.NoError(t, err)
			require.Equal(t, want.NumTokens(), got.NumTokens())
			require.Equal(t, want.NumSecrets(), got.NumSecrets())
			requireSameCredentials(t, want, sortedLike(want, got))
		})
	}
}

func TestGoWritesHadoopReads(t *testing.T) {
	want := fixtureCredentials()
	// A token with empty fields, to check zero-length encodings too.
	want.AddToken("empty", Token{})
	for _, f := range []Format{FormatWritable, FormatProtobuf} {
		t.Run(f.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "creds")
			require.NoError(t, want.WriteFile(path, f))
			out := credentialsTool(t, "dump", path)
			require.Equal(t, dumpLines(want), strings.Split(strings.TrimSpace(out), "\n"))
		})
	}
}

// Hadoop's output for the fixture equals ours byte for byte, in both
// formats, once entries are in the same (HashMap) order.
func TestBytesMatchHadoop(t *testing.T) {
	for v, f := range map[string]Format{"v0": FormatWritable, "v1": FormatProtobuf} {
		t.Run(v, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "creds-"+v)
			credentialsTool(t, "write", path, v)
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			got, err := ParseCredentials(raw)
			require.NoError(t, err)
			ours, err := got.MarshalFormat(f)
			require.NoError(t, err)
			require.Equal(t, raw, ours)
		})
	}
}
