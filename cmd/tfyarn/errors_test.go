package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tfyarn/tfyarn/client"
)

// TestDescribe: the line and exit code of each kind of error; the client's
// words for cluster errors are client's TestExplainError's, and their exit
// code is 2 like every error's but a failed job's.
func TestDescribe(t *testing.T) {
	e := &env{confFrom: "HADOOP_CONF_DIR=/etc/hadoop", timeout: 15 * time.Second}
	idErr := client.CheckApplicationID("nope")
	require.Error(t, idErr)

	for _, tc := range []struct {
		name string
		err  error
		want string
		code int
	}{
		{"usage", usagef("bad"), "bad", exitUsage},
		{"malformed id", idErr, `malformed application id "nope": expected ` + client.ApplicationIDForm, exitUsage},
		{"conf", &confError{errors.New("hadoopconf: yarn.resourcemanager.ha.enabled is true but yarn.resourcemanager.ha.rm-ids is empty")},
			"yarn.resourcemanager.ha.enabled is true but yarn.resourcemanager.ha.rm-ids is empty", exitUsage},
		{"interrupted", context.Canceled, "interrupted", exitUsage},
		{"job failed", &client.JobError{Result: &client.Result{AppID: "application_1_0001", FinalStatus: "FAILED"}},
			"application_1_0001 ended FAILED", exitJobFailed},
		{"exit code", &exitCodeError{code: 7}, "", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, code := describe(tc.err, e)
			require.Equal(t, tc.want, msg)
			require.Equal(t, tc.code, code)
		})
	}
}
