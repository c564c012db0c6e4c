//go:build e2e

package main

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// TestE2EKerberosHistory: on the Kerberized cluster an ended job's task
// table is kept: the AM writes the history record itself, with a keytab's
// login or, for a ticket-cache job, with the job's HDFS delegation tokens
// alone. `tfyarn status` shows the table either way. Each task runs as
// alice, the submitter (the cluster's LinuxContainerExecutor). The same
// two jobs, of one name, keep checkpoints (--checkpoint) and results, which
// on the tasks' side and the ticket-cache AM's take delegation tokens alone:
// the first saves worker 0's checkpoint, the second resumes from it and
// saves its own, and `tfyarn result` gives back each job's results.
//
//	go test -tags e2e -run E2EKerberosHistory ./cmd/tfyarn/
func TestE2EKerberosHistory(t *testing.T) {
	c := clustertest.RequireKerberos(t)
	bin := clustertest.BuildTfyarn(t)
	k := c.Kerberos
	const name = "e2e-krb-history"
	checkpointsCLI(t, c, bin, name, "--delete") // an earlier run's
	program := `id -un; echo "restored=$TFYARN_CHECKPOINT_RESTORED" >&2; ` +
		`date +%s%N > "$TFYARN_CHECKPOINT_DIR/model"; echo "result of $(id -un)" > "$TFYARN_RESULT_FILE"`
	var saved []string // the checkpoint IDs of worker 0, oldest first
	for _, tc := range []struct {
		name  string
		login []string
	}{
		{"keytab", []string{"--principal", k.Principal, "--keytab", k.Keytab}},
		{"ticket cache", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--worker", "2x1c,256m", "--name", name, "--checkpoint", "--output", "json"}, tc.login...)
			stdout, stderr, code := execTfyarn(t, c, bin, nil, append(args, "--", "sh", "-c", program)...)
			require.Equal(t, exitOK, code, stderr)
			r := runJSON(t, stdout)
			require.Contains(t, localContainerLog(t, c, r.AppID, "am.stderr"), "history written to ")
			// Every task ran as alice, the Unix user of her principal (LinuxContainerExecutor).
			require.Len(t, r.Tasks, 2)
			restored := ""
			if len(saved) > 0 {
				restored = saved[len(saved)-1]
			}
			for _, task := range r.Tasks {
				require.Equal(t, "alice\n", containerLog(t, c, r.AppID, task.ContainerID, "stdout"), task.Task)
				require.Contains(t, containerLog(t, c, r.AppID, task.ContainerID, "stderr"), "restored="+restored+"\n", task.Task)
			}

			out, errOut, code := execTfyarn(t, c, bin, nil, "status", r.AppID)
			t.Logf("status:\n%s%s", out, errOut)
			require.Equal(t, exitOK, code, errOut)
			for _, task := range r.Tasks {
				require.Regexp(t, `(?m)^`+task.Task+`\s+succeeded\s+\S+\s+`+task.ContainerID+`\s+`+regexp.QuoteMeta(task.Node)+`\s+0\s+0\s`, out)
			}
			ls := c.Hadoop(t, "hdfs", "dfs", "-ls", hdfs.HistoryPath("alice", r.AppID))
			require.Contains(t, ls, r.AppID+".json")

			out, errOut, code = execTfyarn(t, c, bin, nil, "result", r.AppID, "--task", "worker:1")
			require.Equal(t, exitOK, code, errOut)
			require.Equal(t, "result of alice\n", out)

			var listed struct {
				Checkpoints []struct{ Task, ID, App string } `json:"checkpoints"`
			}
			require.NoError(t, json.Unmarshal([]byte(checkpointsCLI(t, c, bin, name, "--output", "json")), &listed))
			require.Len(t, listed.Checkpoints, len(saved)+1, "worker 0 saved one more")
			last := listed.Checkpoints[len(listed.Checkpoints)-1]
			require.Equal(t, "worker-0", last.Task)
			require.Equal(t, r.AppID, last.App)
			saved = append(saved, last.ID)
		})
	}
	require.Len(t, saved, 2)
}
