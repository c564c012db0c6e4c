//go:build e2e

package main

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/internal/clustertest"
	"github.com/tfyarn/tfyarn/internal/hdfs"
)

// TestE2EKerberosHistory: on the Kerberized cluster an ended job's task
// table is kept both ways: a keytab job's AM writes the history record
// itself; a ticket-cache job's AM, holding delegation tokens only, cannot
// write HDFS files, and `tfyarn run` writes the record from the final
// report it read. `tfyarn status` shows the table either way. Each task runs as
// alice, the submitter (the cluster's LinuxContainerExecutor).
//
//	go test -tags e2e -run E2EKerberosHistory ./cmd/tfyarn/
func TestE2EKerberosHistory(t *testing.T) {
	c := clustertest.RequireKerberos(t)
	bin := clustertest.BuildTfyarn(t)
	k := c.Kerberos
	for _, tc := range []struct {
		name  string
		login []string
		amLog string
	}{
		{"keytab", []string{"--principal", k.Principal, "--keytab", k.Keytab}, "history written to "},
		{"ticket cache", nil, "writing the job's history: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--worker", "2x1c,256m", "--name", "e2e-krb-history", "--output", "json"}, tc.login...)
			stdout, stderr, code := execTfyarn(t, c, bin, nil, append(args, "--", "sh", "-c", "id -un")...)
			require.Equal(t, exitOK, code, stderr)
			r := runJSON(t, stdout)
			require.Contains(t, localContainerLog(t, c, r.AppID, "am.stderr"), tc.amLog)
			// Every task ran as alice, the Unix user of her principal (LinuxContainerExecutor).
			require.Len(t, r.Tasks, 2)
			for _, task := range r.Tasks {
				require.Equal(t, "alice\n", containerLog(t, c, r.AppID, task.ContainerID, "stdout"), task.Task)
			}

			out, errOut, code := execTfyarn(t, c, bin, nil, "status", r.AppID)
			t.Logf("status:\n%s%s", out, errOut)
			require.Equal(t, exitOK, code, errOut)
			for _, task := range r.Tasks {
				require.Regexp(t, `(?m)^`+task.Task+`\s+succeeded\s+\S+\s+`+task.ContainerID+`\s+`+regexp.QuoteMeta(task.Node)+`\s+0\s+0\s`, out)
			}
			ls := c.Hadoop(t, "hdfs", "dfs", "-ls", hdfs.HistoryPath("alice", r.AppID))
			require.Contains(t, ls, r.AppID+".json")
		})
	}
}
