package explain

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// TestExplainError: the lines `tfyarn` prints for errors about the cluster
// and its configuration (cmd/tfyarn's TestDescribe holds their exit code).
func TestLine(t *testing.T) {
	confFrom, timeout := "HADOOP_CONF_DIR=/etc/hadoop", 15*time.Second
	addrs := []string{"rm1:8032", "rm2:8032"}
	remote := func(class, msg string) error {
		return &yarn.RMError{Method: "getApplicationReport", Addr: "rm2:8032", Addrs: addrs,
			Err: &ipc.RemoteError{Class: class, Message: msg, Addr: "rm2:8032"}}
	}
	refused := &yarn.RMError{Method: "getClusterMetrics", Addr: "rm2:8032", Addrs: addrs, Err: &ipc.OpError{
		Op: "call", Addr: "rm2:8032",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)},
	}}
	timedOut := &yarn.RMError{Method: "getClusterMetrics", Addr: "rm1:8032", Addrs: addrs,
		Err: &ipc.OpError{Op: "call", Addr: "rm1:8032", Err: context.DeadlineExceeded}}
	_, idErr := yarn.ParseApplicationID("nope")

	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"malformed id", idErr, `malformed application id "nope": expected ` + yarn.ApplicationIDForm},
		{"not found", &AppError{ID: "application_1_0001", Err: remote(yarn.ApplicationNotFoundException, "gone")},
			"application application_1_0001 not found (the ResourceManager at rm2:8032 does not know it)"},
		{"unreachable", refused,
			"cannot reach the ResourceManager at rm1:8032, rm2:8032 (from HADOOP_CONF_DIR=/etc/hadoop): connection refused; is the cluster up and HADOOP_CONF_DIR right?"},
		{"timeout", timedOut,
			"the ResourceManager at rm1:8032, rm2:8032 (from HADOOP_CONF_DIR=/etc/hadoop) did not answer within 15s; is the cluster up and HADOOP_CONF_DIR right? (raise the limit with tfyarn --timeout DURATION before the command)"},
		{"other remote", remote("org.apache.hadoop.security.AccessControlException", "User bob cannot view"),
			"the ResourceManager at rm2:8032 refused getApplicationReport: AccessControlException: User bob cannot view"},
		{"not the client's", errors.New("open x: no such file"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Line(tc.err, confFrom, timeout))
		})
	}
}

func TestDeadNameNodeIsNamedAsSuch(t *testing.T) {
	err := fmt.Errorf("upload: %w", &hdfs.ConnectError{Addrs: []string{"nn1:8020"}, Err: syscall.ECONNREFUSED})
	require.Equal(t, "cannot reach the NameNode at nn1:8020: connection refused", Line(err, "HADOOP_CONF_DIR=/etc/hadoop", 0))
}
