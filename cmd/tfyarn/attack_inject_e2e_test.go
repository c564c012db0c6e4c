//go:build e2e

package main

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/clustertest"
)

// hexArgsScript writes, into the file named by its first argument, the hex
// of each further argument and then of $HOSTILE, one per line: od prints
// bytes, it interprets none.
// It then names any file pwned* in its working directory (a shipped file's
// name ran `touch pwned` there) and prints the shipped data.csv.
const hexArgsScript = `out=$1; shift
for a in "$@"; do printf %s "$a" | od -An -v -tx1 | tr -d ' \n'; echo; done >"$out"
printf %s "$HOSTILE" | od -An -v -tx1 | tr -d ' \n' >>"$out"; echo >>"$out"
for f in pwned*; do if [ -e "$f" ]; then echo "PWNED $f"; fi; done >>"$out"
echo "DATA $(cat data.csv)" >>"$out"`

// TestE2EAttackNodeManagerInjection: the NodeManager rewrites {{ }}, <CPS>
// and <LOG_DIR> in a container's command and environment values, and its
// launch script pastes both, and every link name, into bash between double
// quotes. A job's arguments, --setenv values and link names are the user's
// bytes: they must reach the program byte for byte (non-UTF-8 included)
// and run nothing, in YARN and with --local; environment names and link
// names that a shell would interpret are refused before anything is
// created. README: "The program's arguments and `--setenv` values reach it
// byte for byte ..." and the names sentence after it.
//
//	go test -tags e2e -run '^TestE2EAttackNodeManagerInjection$' ./cmd/tfyarn/
func TestE2EAttackNodeManagerInjection(t *testing.T) {
	c := clustertest.Require(t)
	bin := clustertest.BuildTfyarn(t)
	dir := clustertest.ContainerDir(t) // an injected touch would succeed there, whoever the task runs as
	marker := func(name string) string { return filepath.Join(dir, "pwned-"+name) }
	hostile := []string{
		"{{(touch " + marker("braces") + ")}}", "<CPS>", "<LOG_DIR>/x", "$(touch " + marker("dollar") + ")",
		"`touch " + marker("backquote") + "`", "'", `"`, `\`, `\"`, "a\nb", "", "\xff\xfe\x80 not UTF-8", "$HOME ${PWD} {{HOME}}",
	}
	envValue := "{{(touch " + marker("env-braces") + ")}}$(touch " + marker("env-dollar") + ")`touch " + marker("env-backquote") +
		"`\"'\\<CPS><LOG_DIR>$HOME\n\xff"
	// The TF1 placeholders are the launcher's one rewrite, and double
	// braces escape them.
	placeholders := map[string]string{"{task_index}": "0", "{{task_index}}": "{task_index}", "{{job_name}}x": "{job_name}x"}
	hostile = append(hostile, "{task_index}", "{{task_index}}", "{{job_name}}x")
	var want strings.Builder
	for _, a := range hostile {
		if p, ok := placeholders[a]; ok {
			a = p
		}
		want.WriteString(hex.EncodeToString([]byte(a)) + "\n")
	}
	want.WriteString(hex.EncodeToString([]byte(envValue)) + "\n")
	want.WriteString("DATA shipped\n")
	// A file whose own name would run commands, shipped under a good name:
	// the NodeManager localizes it under its name in the HDFS cache.
	shipped := filepath.Join(dir, "x$(touch pwned)`touch pwned2`{{(touch pwned3)}}.csv")
	require.NoError(t, os.WriteFile(shipped, []byte("shipped\n"), 0o644))
	requireNoMarkers := func(t *testing.T) {
		t.Helper()
		found, err := filepath.Glob(marker("*"))
		require.NoError(t, err)
		require.Empty(t, found, "a user's bytes ran as a command")
	}

	t.Run("yarn", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(dir, "yarn.hex")
		secret := "secret-" + randomHex(t)
		args := append([]string{"run", "--name", "e2e-attack-inject", "--worker", "1c,256m", "--output", "json",
			"--setenv", "HOSTILE=" + envValue, "--setenv", "E2E_SECRET=" + secret, "--files", shipped + "#data.csv",
			"--", "sh", "-c", hexArgsScript, "sh", out}, hostile...)
		stdout, stderr, code := execTfyarn(t, c, bin, nil, args...)
		require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
		r := runJSON(t, stdout)
		require.Equal(t, "SUCCEEDED", r.FinalStatus)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		require.Equal(t, want.String(), string(got), "the program's arguments and $HOSTILE, in hex")
		requireNoMarkers(t)

		// README: a --setenv value is in no launch script, so in no log
		// (the aggregated logs hold every container's launch_container.sh),
		// nor in the job's history.
		logs := appLogs(t, c, r.AppID, 2)
		require.Contains(t, logs, "LogType:launch_container.sh")
		require.NotContains(t, logs, secret)
		hist, errOut, code := runCLI(t, "--conf-dir", c.ConfDir, "status", r.AppID, "--output", "json")
		require.Equal(t, exitOK, code, errOut)
		require.Contains(t, hist, `"history"`)
		require.NotContains(t, hist, secret)
	})

	t.Run("local", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(dir, "local.hex")
		args := append([]string{"run", "--local", "--worker", "1c", "--setenv", "HOSTILE=" + envValue,
			"--files", shipped + "#data.csv", "--", "sh", "-c", hexArgsScript, "sh", out}, hostile...)
		stdout, stderr, code := execTfyarn(t, c, bin, nil, args...)
		require.Equal(t, exitOK, code, "stdout: %s\nstderr: %s", stdout, stderr)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		require.Equal(t, want.String(), string(got), "the program's arguments and $HOSTILE, in hex")
		requireNoMarkers(t)
	})

	t.Run("bad names", func(t *testing.T) {
		t.Parallel()
		user := c.User(t, "tfyarn-e2e-"+randomHex(t))
		data := filepath.Join(dir, "data.csv")
		require.NoError(t, os.WriteFile(data, []byte("a,b\n"), 0o644))
		spaced := filepath.Join(dir, "my data.csv")
		require.NoError(t, os.WriteFile(spaced, []byte("a,b\n"), 0o644))
		// Link names hold no '/': a relative touch would land in the
		// container's working directory; the exit code tells.
		script := filepath.Join(dir, "t`touch pwned`.py")
		require.NoError(t, os.WriteFile(script, []byte("print(1)\n"), 0o644))
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--setenv", "A;touch " + marker("env-name") + ";B=1", "--", "true"}, `tfyarn: environment variable name "A;touch `},
			{[]string{"--setenv", "A B=1", "--", "true"}, `tfyarn: environment variable name "A B" is invalid`},
			{[]string{"--setenv", "1A=1", "--", "true"}, `tfyarn: environment variable name "1A" is invalid`},
			{[]string{"--files", data + "#$(touch pwned)", "--", "true"}, `tfyarn: --files "`},
			{[]string{"--files", data + "#{{HOME}}", "--", "true"}, `invalid name "{{HOME}}" in the container`},
			{[]string{"--files", data + "#<CPS>", "--", "true"}, `invalid name "<CPS>" in the container`},
			{[]string{"--files", data + `#a"b`, "--", "true"}, `invalid name "a\"b" in the container`},
			{[]string{"--files", spaced, "--", "true"}, `invalid name "my data.csv" in the container`},
			{[]string{script}, "in the container: use only letters"},
		} {
			args := append([]string{"run", "--worker", "1c,256m"}, tc.args...)
			stdout, stderr, code := execTfyarn(t, c, bin, []string{"HADOOP_USER_NAME=" + user}, args...)
			require.Equal(t, exitUsage, code, "%q: %s", tc.args, stderr)
			require.Empty(t, stdout)
			require.Contains(t, stderr, tc.want, "%q", tc.args)
			require.True(t, strings.HasPrefix(stderr, "tfyarn: "), "%q", stderr)
			require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		}
		requireNothingCreatedFor(t, c, user)
		requireNoMarkers(t)
	})
}
