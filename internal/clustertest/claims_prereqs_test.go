package clustertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestClaimsPrereqsNameWhatIsMissing: README "run as another user, it names the exact apt-get
// install line in one message and stops with exit code 2", and Chromium is among what `make
// test` needs but `make demo` does not. The tools are stand-ins on a PATH of the test's own, and
// a stand-in `id` makes the script believe it is not root, so nothing is ever installed.
func TestClaimsPrereqsNameWhatIsMissing(t *testing.T) {
	script := filepath.Join(RepoRoot(), "scripts", "prereqs.sh")
	bin := t.TempDir()
	for _, tool := range []string{"bash", "grep", "head"} {
		p, err := exec.LookPath(tool)
		require.NoError(t, err, "the test needs %s", tool)
		require.NoError(t, os.Symlink(p, filepath.Join(bin, tool)))
	}
	stub := func(name, body string) {
		require.NoError(t, os.WriteFile(filepath.Join(bin, name), []byte("#!"+filepath.Join(bin, "bash")+"\n"+body+"\n"), 0o755))
	}
	stub("id", "echo 1000")
	stub("java", `echo 'openjdk version "17.0.15" 2025-04-15' >&2`)
	stub("python3", "exit 0")
	stub("go", "exit 0")
	for _, tool := range []string{"curl", "flock", "make", "useradd"} {
		stub(tool, "exit 0")
	}
	run := func(args ...string) (string, int) {
		cmd := exec.Command(filepath.Join(bin, "bash"), append([]string{script}, args...)...)
		cmd.Env = []string{"PATH=" + bin}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return string(out), code
	}

	out, code := run("test")
	require.Equal(t, 2, code, out)
	require.Equal(t, 1, strings.Count(strings.TrimSpace(out), "\n")+1, "one line: %q", out)
	require.Contains(t, out, "apt-get install maven chromium")
	require.Contains(t, out, " krb5-user", "MIT's kinit for the KEYRING ticket cache tests")

	out, code = run("demo")
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "apt-get install maven'")
	require.NotContains(t, out, "chromium")
	require.NotContains(t, out, "krb5-user")

	stub("mvn", "exit 0")
	stub("chromium", "exit 0")
	for _, tool := range []string{"dockerd", "docker", "mmdebstrap", "kinit", "kswitch", "kdestroy"} {
		stub(tool, "exit 0")
	}
	out, code = run("test")
	require.Equal(t, 0, code, out)
	require.Empty(t, out)
}
