package hdfs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/ipc"
)

// PathError records a failed operation on an HDFS path, like os.PathError but
// saying which filesystem it was about: "hdfs: upload /user/x/a.tgz: <cause>".
type PathError struct {
	Op   string
	Path string
	Err  error
}

func (e *PathError) Error() string { return "hdfs: " + e.Op + " " + e.Path + ": " + e.Err.Error() }
func (e *PathError) Unwrap() error { return e.Err }

// pathErr wraps err, dropping the os.PathError colinmarc puts around causes
// when it names the same path (the message would say it twice).
func pathErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var pe *PathError
	if errors.As(err, &pe) {
		return err
	}
	var ope *os.PathError
	if errors.As(err, &ope) && ope.Path == path {
		err = ope.Err
	}
	return &PathError{Op: op, Path: path, Err: err}
}

// ConnectError says no NameNode of the configured filesystem could be reached.
type ConnectError struct {
	Addrs []string // the NameNode RPC addresses tried
	Hint  string   // where the addresses came from, for the user to check
	Err   error
}

func (e *ConnectError) Error() string {
	what := "the NameNode at "
	if len(e.Addrs) > 1 {
		what = "any NameNode at "
	}
	s := "hdfs: cannot reach " + what + strings.Join(e.Addrs, ", ") + ": " + describe(e.Err)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *ConnectError) Unwrap() error { return e.Err }

func (fs *FS) connectError(ctx context.Context, err error, conf *hadoopconf.Config) error {
	// Prefer the dial error we recorded: colinmarc's own error is a string
	// that no longer unwraps to ECONNREFUSED and friends.
	fs.mu.Lock()
	for _, a := range fs.target.Addresses {
		if de, ok := fs.dialErrs[a]; ok {
			err = de
		}
	}
	fs.mu.Unlock()
	// When ctx ended, say so (errors.Is(err, context.DeadlineExceeded)), even
	// if the socket deadline, which equals ctx's, fired a moment before ctx did.
	cerr := ctx.Err()
	if d, ok := ctx.Deadline(); cerr == nil && ok && !time.Now().Before(d) {
		cerr = context.DeadlineExceeded
	}
	if cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w: %w", cerr, err)
	}
	hint := fmt.Sprintf("fs.defaultFS is %s", fs.target.URI)
	if src := conf.Source(hadoopconf.KeyDefaultFS); strings.HasSuffix(src, ".xml") {
		hint += " from " + src
	}
	hint += "; check HADOOP_CONF_DIR"
	return &ConnectError{Addrs: fs.target.Addresses, Hint: hint, Err: err}
}

// describe shortens network errors to their cause: "connection refused" reads
// better than "dial tcp 127.0.0.1:8020: connect: connection refused" after the
// address has already been named.
func describe(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "cannot resolve " + dnsErr.Name + ": " + dnsErr.Err
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		var sys *os.SyscallError
		if errors.As(opErr.Err, &sys) {
			return sys.Err.Error()
		}
		return opErr.Err.Error()
	}
	return err.Error()
}

// isExists reports a "destination exists" refusal from either client.
func isExists(err error) bool {
	return errors.Is(err, os.ErrExist) || ipc.IsClass(err, "org.apache.hadoop.fs.FileAlreadyExistsException")
}
