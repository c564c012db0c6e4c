package ipc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
)

// Well-known remote exception classes.
const (
	StandbyException   = "org.apache.hadoop.ipc.StandbyException"
	RetriableException = "org.apache.hadoop.ipc.RetriableException"
)

var (
	// ErrClosed is returned by calls on a closed Client.
	ErrClosed = errors.New("ipc: client closed")
	// ErrConnectionClosed is the cause given to calls that were in flight when
	// their connection died; the next call dials again.
	ErrConnectionClosed = errors.New("ipc: connection closed")
	// ErrFrameTooLarge is the cause when a length on the wire exceeds Config.MaxFrame.
	ErrFrameTooLarge = errors.New("ipc: frame exceeds maximum length")
)

// RemoteError is an exception the server reported for a call (status ERROR) or
// for the whole connection (status FATAL, after which the server hangs up).
type RemoteError struct {
	Class   string // Java exception class, e.g. org.apache.hadoop.ipc.StandbyException
	Message string // the exception message, without the Java stack trace
	Stack   string // the rest of the server's errorMsg (stack trace), if any
	Code    hadoopcommon.RpcResponseHeaderProto_RpcErrorCodeProto
	Fatal   bool   // the server closed the connection
	Method  string // Protocol.method, e.g. ApplicationClientProtocolPB.getClusterMetrics
	Addr    string // server address
}

func (e *RemoteError) Error() string {
	var b strings.Builder
	b.WriteString("ipc: ")
	if e.Method != "" {
		b.WriteString(e.Method)
		b.WriteString(" on ")
	}
	b.WriteString(e.Addr)
	b.WriteString(": ")
	if e.Fatal {
		b.WriteString("fatal: ")
	}
	b.WriteString(e.Class)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Is makes errors.Is(err, &RemoteError{Class: c}) match on class alone.
func (e *RemoteError) Is(target error) bool {
	t, ok := target.(*RemoteError)
	return ok && t.Class != "" && matchClass(e.Class, t.Class)
}

// IsClass reports whether err is (or wraps) a RemoteError of the given Java
// class. A class without a package ("StandbyException") matches on the simple name.
func IsClass(err error, class string) bool {
	var re *RemoteError
	return errors.As(err, &re) && matchClass(re.Class, class)
}

// IsStandby reports whether the server refused the call because it is not the
// active member of an HA pair.
func IsStandby(err error) bool { return IsClass(err, StandbyException) }

func matchClass(have, want string) bool {
	if have == want {
		return true
	}
	return !strings.Contains(want, ".") && strings.HasSuffix(have, "."+want)
}

func newRemoteError(h *hadoopcommon.RpcResponseHeaderProto) *RemoteError {
	msg, stack := splitJavaStack(h.GetErrorMsg())
	return &RemoteError{
		Class:   h.GetExceptionClassName(),
		Message: msg,
		Stack:   stack,
		Code:    h.GetErrorDetail(),
		Fatal:   h.GetStatus() == hadoopcommon.RpcResponseHeaderProto_FATAL,
	}
}

// splitJavaStack separates the message from the stack trace Hadoop's server
// appends (StringUtils.stringifyException), so Error() stays one line.
func splitJavaStack(s string) (msg, stack string) {
	if i := strings.Index(s, "\n\tat "); i >= 0 {
		return strings.TrimSpace(s[:i]), s[i+1:]
	}
	return strings.TrimSpace(s), ""
}

// OpError is a local failure of a call or dial: the connection could not be
// made, broke, or the call's context ended. Err is the cause.
type OpError struct {
	Op     string // "call" or "dial"
	Method string // Protocol.method, empty for dial
	Addr   string
	Err    error
}

func (e *OpError) Error() string {
	if e.Method == "" {
		return fmt.Sprintf("ipc: %s %s: %v", e.Op, e.Addr, e.Err)
	}
	return fmt.Sprintf("ipc: %s %s on %s: %v", e.Op, e.Method, e.Addr, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }
