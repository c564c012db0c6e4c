package yarn

import (
	"context"
	"errors"
	"net"

	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
)

// Java exception classes the RM answers with that callers act on.
const (
	ApplicationNotFoundException = "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException"
)

// IsApplicationNotFound reports whether the RM said it does not know the
// application (never submitted, or forgotten after
// yarn.resourcemanager.max-completed-applications).
func IsApplicationNotFound(err error) bool {
	return ipc.IsClass(err, ApplicationNotFoundException)
}

// IsUnknownMethod reports whether the server does not know the method called: an older release's
// protocol lacks it. Hadoop's RPC server answers so with RpcNoSuchMethodException and the error
// code ERROR_NO_SUCH_METHOD (TestCompat's rm-features case sees it from a real RM).
func IsUnknownMethod(err error) bool {
	var re *ipc.RemoteError
	if !errors.As(err, &re) {
		return false
	}
	return re.Code == hadoopcommon.RpcResponseHeaderProto_ERROR_NO_SUCH_METHOD || re.Class == "org.apache.hadoop.ipc.RpcNoSuchMethodException"
}

// IsUnreachable reports whether err means no ResourceManager could be
// connected to at all: refused, unresolvable, or timed out while dialing.
// A server that answered with an exception is reachable.
func IsUnreachable(err error) bool {
	var re *ipc.RemoteError
	if errors.As(err, &re) {
		return false
	}
	var ne *net.OpError
	if errors.As(err, &ne) && ne.Op == "dial" {
		return true
	}
	var de *net.DNSError
	return errors.As(err, &de)
}

// IsTimeout reports whether err is a call that ran out of time.
func IsTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
