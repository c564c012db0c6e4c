package yarn

import (
	"context"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tfyarn/tfyarn/internal/ipc"
)

func TestRMErrorClassification(t *testing.T) {
	notFound := &RMError{Method: "getApplicationReport", Addr: "rm:8032", Err: &ipc.RemoteError{
		Class: ApplicationNotFoundException, Message: "Application with id 'application_1_0001' doesn't exist in RM.",
		Method: "ApplicationClientProtocolPB.getApplicationReport", Addr: "rm:8032",
	}}
	require.True(t, IsApplicationNotFound(notFound))
	require.False(t, IsUnreachable(notFound))
	require.EqualError(t, notFound,
		"yarn: getApplicationReport rm:8032: ApplicationNotFoundException: Application with id 'application_1_0001' doesn't exist in RM.")

	refused := &RMError{Method: "getClusterMetrics", Addr: "rm:8032", Err: &ipc.OpError{
		Op: "call", Addr: "rm:8032",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &wrapErrno{syscall.ECONNREFUSED}},
	}}
	require.True(t, IsUnreachable(refused))
	require.False(t, IsApplicationNotFound(refused))
	require.ErrorIs(t, refused, syscall.ECONNREFUSED)

	timeout := &RMError{Method: "getClusterMetrics", Addr: "rm:8032", Err: &ipc.OpError{Op: "call", Addr: "rm:8032", Err: context.DeadlineExceeded}}
	require.True(t, IsTimeout(timeout))
	require.False(t, IsUnreachable(timeout))
	require.Equal(t, "context deadline exceeded", timeout.Reason())
}

type wrapErrno struct{ errno syscall.Errno }

func (w *wrapErrno) Error() string { return "connect: " + w.errno.Error() }
func (w *wrapErrno) Unwrap() error { return w.errno }
