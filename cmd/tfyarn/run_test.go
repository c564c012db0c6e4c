package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Bad runs fail before any RPC: the configuration names a dead RM.
func TestRunUsageErrors(t *testing.T) {
	conf := deadConf(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--worker", "3x1q", "--", "true"}, `worker spec "3x1q": bad vcores "1q"; expected <N>c, e.g. 4c`},
		{[]string{"run", "--worker", "1c"}, "run needs a command after --"},
		{[]string{"run", "--", "true"}, "the job has no tasks"},
		{[]string{"run", "--ps", "1c", "--", "true"}, "the job has no chief and no worker"},
		{[]string{"run", "--worker", "1c", "--setenv", "NOEQUALS", "--", "true"}, `--setenv "NOEQUALS": expected KEY=VALUE`},
		{[]string{"run", "--worker", "1c", "--setenv", "TF_CONFIG=x", "--", "true"}, "TF_CONFIG is set by tfyarn"},
		{[]string{"run", "--worker", "1c", "--am-memory", "lots", "--", "true"}, `--am-memory "lots": expected a size like 256m or 1g`},
		{[]string{"run", "--worker", "1c", "--output", "xml", "--", "true"}, `--output "xml": expected table or json`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{"--conf-dir", conf}, tc.args...)...)
			require.Equal(t, exitUsage, code, stderr)
			require.Empty(t, stdout)
			require.Contains(t, stderr, tc.want)
			require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}
}

func TestRunHelpShowsTheSpecGrammar(t *testing.T) {
	stdout, _, code := runCLI(t, "run", "--help")
	require.Equal(t, exitOK, code)
	require.Contains(t, stdout, "[N x] <vcores>c [, <mem>g|<mem>m] [, <k>gpu]")
	require.Contains(t, stdout, "--setenv")
	stdout, _, _ = runCLI(t, "--help")
	require.NotContains(t, stdout, " am ", "the AM command is hidden")
}

func TestParseMiB(t *testing.T) {
	for in, want := range map[string]int64{"256": 256, "256m": 256, "1g": 1024, "2G": 2048} {
		got, err := parseMiB(in)
		require.NoError(t, err)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "0", "-1m", "1.5g", "x"} {
		_, err := parseMiB(bad)
		require.Error(t, err, bad)
	}
}
