package yarn

import (
	"fmt"
	"strings"

	"github.com/tfyarn/tfyarn/internal/ipc"

	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// NMError is a failed NodeManager call (the whole call, not one container):
// "yarn: startContainers localhost:45454: <cause>".
type NMError struct {
	Method string
	Addr   string
	Err    error
}

func (e *NMError) Error() string {
	return fmt.Sprintf("yarn: %s %s: %s", e.Method, e.Addr, causeText(e.Err))
}

func (e *NMError) Unwrap() error { return e.Err }

// ContainerError is the NodeManager's refusal for one container of a call
// (a failed_requests entry): the call succeeded, this container did not.
type ContainerError struct {
	Node        string // NodeManager host:port
	ContainerID *hadoopyarn.ContainerIdProto
	Class       string // Java exception class, e.g. org.apache.hadoop.yarn.exceptions.YarnException
	Message     string
}

func (e *ContainerError) Error() string {
	// NM messages often span lines; an error reads better as one.
	msg := strings.Join(strings.Fields(e.Message), " ")
	return fmt.Sprintf("yarn: container %s on %s: %s: %s", FormatContainerID(e.ContainerID), e.Node, shortClass(e.Class), msg)
}

func containerErrors(node string, failed []*hadoopyarn.ContainerExceptionMapProto) []*ContainerError {
	var out []*ContainerError
	for _, f := range failed {
		ex := f.GetException()
		e := &ContainerError{Node: node, ContainerID: f.GetContainerId(), Class: ex.GetClassName(), Message: ex.GetMessage()}
		// The NM often wraps the real reason (e.g. InvalidToken) as the cause.
		for c := ex.GetCause(); c != nil && e.Message == ""; c = c.GetCause() {
			e.Class, e.Message = c.GetClassName(), c.GetMessage()
		}
		out = append(out, e)
	}
	return out
}

// InvalidTokenException is what a NodeManager throws for a container token
// it did not issue or that was forged; it fails the whole startContainers
// call, unlike most per-container refusals.
const InvalidTokenException = "org.apache.hadoop.security.token.SecretManager$InvalidToken"

// IsInvalidToken reports whether err is (or wraps) the server refusing a token.
func IsInvalidToken(err error) bool { return ipc.IsClass(err, InvalidTokenException) }
