package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/tfyarn/tfyarn/client"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// usageError is a mistake in how tfyarn was invoked.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitCodeError makes the process exit with code; err, if any, explains
// it (`tfyarn task` exits with its program's code, which needs no words).
type exitCodeError struct {
	code int
	err  error
}

func (e *exitCodeError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitCodeError) Unwrap() error { return e.err }

// appError ties an RM error to the application the command was about, so
// "not found" can name it.
type appError struct {
	id  string
	err error
}

func (e *appError) Error() string { return e.id + ": " + e.err.Error() }
func (e *appError) Unwrap() error { return e.err }

// confError is a configuration that could not be loaded or used.
type confError struct{ err error }

func (e *confError) Error() string { return e.err.Error() }
func (e *confError) Unwrap() error { return e.err }

// describe is the one place that turns an error into the line users see and
// the exit code. Everything a command returns passes through here.
func describe(err error, e *env) (msg string, code int) {
	var (
		ue  *usageError
		ide *yarn.IDError
		ae  *appError
		ce  *confError
		cce *client.ConfigError
		rme *yarn.RMError
		je  *client.JobError
		xe  *exitCodeError
		nne *hdfs.ConnectError
		dte *hdfs.TokenError
	)
	switch {
	case errors.As(err, &xe):
		return xe.Error(), xe.code
	case errors.As(err, &je):
		// The job ran and did not succeed: the one exit code that is not 2.
		return je.Error(), exitJobFailed
	case errors.As(err, &ue):
		return ue.msg, exitUsage
	case errors.As(err, &ide):
		return fmt.Sprintf("malformed %s %q: expected %s", ide.Kind, ide.Input, ide.Want), exitUsage
	case yarn.IsApplicationNotFound(err):
		id := "?"
		if errors.As(err, &ae) {
			id = ae.id
		}
		return fmt.Sprintf("application %s not found (the ResourceManager at %s does not know it)", id, rmAddr(err)), exitUsage
	case errors.As(err, &ce):
		return strings.TrimPrefix(ce.err.Error(), "hadoopconf: "), exitUsage
	case errors.As(err, &cce):
		return cce.Error(), exitUsage
	case errors.As(err, &nne):
		// The NameNode's own error already names its addresses and where they came from.
		return strings.TrimPrefix(nne.Error(), "hdfs: "), exitUsage
	case errors.As(err, &dte):
		return dte.Error(), exitUsage
	case yarn.IsUnreachable(err):
		return fmt.Sprintf("cannot reach the ResourceManager at %s (from %s): %s; is the cluster up and %s right?",
			rmAddrs(err), e.confFrom, netCause(err), client.EnvHadoopConfDir), exitUsage
	case yarn.IsTimeout(err) && errors.As(err, &rme):
		return fmt.Sprintf("the ResourceManager at %s (from %s) did not answer within %s; is the cluster up and %s right? (raise the limit with tfyarn --timeout DURATION before the command)",
			rmAddrs(err), e.confFrom, e.timeout, client.EnvHadoopConfDir), exitUsage
	case errors.Is(err, context.Canceled):
		return "interrupted", exitUsage
	case authMismatch(err, e) != "":
		return authMismatch(err, e), exitUsage
	case errors.As(err, &rme):
		return remoteText(rme), exitUsage
	}
	return err.Error(), exitUsage
}

func rmAddr(err error) string {
	var rme *yarn.RMError
	if errors.As(err, &rme) {
		return rme.Addr
	}
	return "?"
}

func rmAddrs(err error) string {
	var rme *yarn.RMError
	if errors.As(err, &rme) && len(rme.Addrs) > 0 {
		return strings.Join(rme.Addrs, ", ")
	}
	return "?"
}

// netCause is the socket-level reason, without Go's "dial tcp ...:" prefix
// (the address is already in the message).
func netCause(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var oe *ipc.OpError
	if errors.As(err, &oe) {
		s := oe.Err.Error()
		if i := strings.LastIndex(s, ": "); i >= 0 {
			return s[i+2:]
		}
		return s
	}
	return err.Error()
}

func remoteText(rme *yarn.RMError) string {
	var re *ipc.RemoteError
	if errors.As(rme.Err, &re) {
		return fmt.Sprintf("the ResourceManager at %s refused %s: %s", rme.Addr, rme.Method, rme.Reason())
	}
	return fmt.Sprintf("%s on the ResourceManager at %s failed: %s", rme.Method, rme.Addr, rme.Reason())
}

// authMismatch explains a client configuration that does not match the
// cluster's security: Kerberos on one side only, or a server principal other
// than the configured one. "" for any other error.
func authMismatch(err error, e *env) string {
	var pm *ipc.PrincipalMismatchError
	switch {
	case errors.As(err, &pm):
		return fmt.Sprintf("the server authenticates as %s, but the configuration (%s) names %s (yarn.resourcemanager.principal or dfs.namenode.kerberos.principal); use the cluster's client configuration",
			pm.Offered, e.confFrom, pm.Configured)
	case errors.Is(err, ipc.ErrServerSimple):
		return fmt.Sprintf("the configuration (%s) says hadoop.security.authentication=kerberos, but the cluster does not use Kerberos (its servers accept SIMPLE authentication only); use the cluster's client configuration", e.confFrom)
	case strings.Contains(err.Error(), "SIMPLE authentication is not enabled"):
		return fmt.Sprintf("the cluster requires Kerberos, but the configuration (%s) says hadoop.security.authentication=simple; use the cluster's client configuration (core-site.xml)", e.confFrom)
	}
	return ""
}
