package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckpointRefusals: what --checkpoint cannot do is refused in one line, exit 2, before
// any RPC (the configuration names an RM nobody listens on): a job name or directory that
// cannot name a checkpoint directory, the other flags without --checkpoint,
// --checkpoint-keep out of range, `checkpoints --delete` without a job.
func TestCheckpointRefusals(t *testing.T) {
	conf := deadConf(t)
	job := []string{"--worker", "1c,256m", "--", "true"}
	for _, tc := range []struct {
		conf string
		args []string
		want string
	}{
		{conf, append([]string{"run", "--checkpoint", "--name", "a/b"}, job...), `--checkpoint: job name "a/b" cannot name a checkpoint directory`},
		{conf, append([]string{"run", "--checkpoint", "--name", ".."}, job...), `--checkpoint: job name ".." cannot name a checkpoint directory`},
		{conf, append([]string{"run", "--checkpoint=ckpt"}, job...), `--checkpoint: checkpoint directory "ckpt": not an absolute HDFS path below /`},
		{conf, append([]string{"run", "--checkpoint=/a/../b"}, job...), "not an absolute HDFS path below /"},
		{conf, append([]string{"run", "--checkpoint-keep", "3"}, job...), "--checkpoint-keep: give --checkpoint too"},
		{conf, append([]string{"run", "--checkpoint-fresh"}, job...), "--checkpoint-fresh: give --checkpoint too"},
		{conf, append([]string{"run", "--checkpoint", "--checkpoint-keep", "0"}, job...), "--checkpoint-keep 0: give 1 to 100"},
		{conf, append([]string{"run", "--checkpoint", "--checkpoint-keep", "101"}, job...), "--checkpoint-keep 101: give 1 to 100"},
		{conf, []string{"checkpoints", "--delete"}, "--delete: name the job whose checkpoints to delete"},
		{conf, []string{"checkpoints", "a", "b"}, "checkpoints takes at most one job name"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := runCLI(t, append([]string{"--conf-dir", tc.conf}, tc.args...)...)
			require.Equal(t, exitUsage, code, stderr)
			require.Empty(t, stdout)
			require.Contains(t, stderr, tc.want)
			require.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one line: %s", stderr)
		})
	}
}
