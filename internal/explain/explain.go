// Package explain words, in the one line a person should read, an error
// about the cluster or its configuration: the line `tfyarn` prints
// (client.ExplainError).
package explain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/tfyarn/tfyarn/internal/connect"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// AppError ties an error of client's Status, Kill or Logs to the
// application asked about, so that "not found" can name it.
type AppError struct {
	ID  string
	Err error
}

func (e *AppError) Error() string { return e.ID + ": " + e.Err.Error() }
func (e *AppError) Unwrap() error { return e.Err }

// AboutApp makes *err, if any, an *AppError about appID (for a deferred call).
func AboutApp(err *error, appID string) {
	if *err != nil {
		*err = &AppError{ID: appID, Err: *err}
	}
}

// Line is the one line a person should read for an error of client
// that is about the cluster or its configuration: a malformed or
// unknown application id, a configuration that cannot be loaded, a
// ResourceManager or NameNode that cannot be reached, does not answer within
// callTimeout or refuses, Kerberos on one side only. confFrom says where the
// configuration came from ("HADOOP_CONF_DIR=/etc/hadoop"). "" for any other
// error (the job's own failure, a cancelled context, a local file): its
// Error() is then the best words.
func Line(err error, confFrom string, callTimeout time.Duration) string {
	var (
		ide *yarn.IDError
		ae  *AppError
		ce  *connect.ConfigError
		rme *yarn.RMError
		nne *hdfs.ConnectError
		dte *hdfs.TokenError
	)
	switch {
	case errors.As(err, &ide):
		return fmt.Sprintf("malformed %s %q: expected %s", ide.Kind, ide.Input, ide.Want)
	case yarn.IsApplicationNotFound(err):
		id := "?"
		if errors.As(err, &ae) {
			id = ae.ID
		}
		return fmt.Sprintf("application %s not found (the ResourceManager at %s does not know it)", id, failedRMAddr(err))
	case errors.As(err, &ce):
		return ce.Error()
	case errors.As(err, &nne):
		// The NameNode's own error already names its addresses and where they came from.
		return strings.TrimPrefix(nne.Error(), "hdfs: ")
	case errors.As(err, &dte):
		return dte.Error()
	case yarn.IsUnreachable(err):
		return fmt.Sprintf("cannot reach the ResourceManager at %s (from %s): %s; is the cluster up and %s right?",
			configuredRMAddrs(err), confFrom, netCause(err), hadoopconf.EnvHadoopConfDir)
	case yarn.IsTimeout(err) && errors.As(err, &rme):
		return fmt.Sprintf("the ResourceManager at %s (from %s) did not answer within %s; is the cluster up and %s right? (raise the limit with tfyarn --timeout DURATION before the command)",
			configuredRMAddrs(err), confFrom, callTimeout, hadoopconf.EnvHadoopConfDir)
	case errors.Is(err, context.Canceled):
		return ""
	case authMismatch(err, confFrom) != "":
		return authMismatch(err, confFrom)
	case errors.As(err, &rme):
		return remoteText(rme)
	}
	return ""
}

func failedRMAddr(err error) string {
	var rme *yarn.RMError
	if errors.As(err, &rme) {
		return rme.Addr
	}
	return "?"
}

func configuredRMAddrs(err error) string {
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
func authMismatch(err error, confFrom string) string {
	var pm *ipc.PrincipalMismatchError
	switch {
	case errors.As(err, &pm):
		return fmt.Sprintf("the server authenticates as %s, but the configuration (%s) names %s (yarn.resourcemanager.principal or dfs.namenode.kerberos.principal); use the cluster's client configuration",
			pm.Offered, confFrom, pm.Configured)
	case errors.Is(err, ipc.ErrServerSimple):
		return fmt.Sprintf("the configuration (%s) says hadoop.security.authentication=kerberos, but the cluster does not use Kerberos (its servers accept SIMPLE authentication only); use the cluster's client configuration", confFrom)
	case strings.Contains(err.Error(), "SIMPLE authentication is not enabled"):
		return fmt.Sprintf("the cluster requires Kerberos, but the configuration (%s) says hadoop.security.authentication=simple; use the cluster's client configuration (core-site.xml)", confFrom)
	}
	return ""
}
