package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTensorBoardUsage: --tensorboard and --logdir mistakes fail at once,
// one line, exit 2, before any RPC.
func TestTensorBoardUsage(t *testing.T) {
	conf := deadConf(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--worker", "1c", "--logdir", "/logs", "--", "true"}, `--logdir "/logs" is TensorBoard's: add --tensorboard [SPEC]`},
		{[]string{"--worker", "1c", "--tensorboard", "--", "true"}, "--tensorboard needs the log directory to serve: --logdir PATH"},
		{[]string{"--worker", "1c", "--tensorboard=0c", "--logdir", "/logs", "--", "true"}, "0c"},
		{[]string{"--worker", "1c", "--tensorboard", "--logdir", "/logs", "2c,2g", "--", "true"}, "--tensorboard 2c,2g: write --tensorboard=2c,2g"},
		{[]string{"--worker", "1c", "--tensorboard", "--logdir", "/logs", "--local", "--", "true"}, "--tensorboard runs on YARN only"},
		{[]string{"--worker", "1c", "--tensorboard=1c,512m", "--logdir", "/logs", "--success", "all", "--", "true"},
			"a TensorBoard task never exits by itself: it needs --success chief"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{"--conf-dir", conf, "run"}, tc.args...)...)
			require.Equal(t, exitUsage, code, stderr)
			require.Empty(t, stdout)
			require.Contains(t, stderr, tc.want)
			require.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		})
	}
}
