package connect

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// ConfigError is a Hadoop client configuration that could not be loaded or
// used (a missing directory, bad XML, no ResourceManager address, bad
// auth_to_local rules).
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return strings.TrimPrefix(e.Err.Error(), "hadoopconf: ") }
func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConf loads the client configuration in dir, else the environment's
// (HADOOP_CONF_DIR, YARN_CONF_DIR, HADOOP_HOME's); its errors are
// *ConfigError.
func LoadConf(dir string) (*hadoopconf.Config, error) {
	var conf *hadoopconf.Config
	var err error
	if dir != "" {
		conf, err = hadoopconf.LoadDir(dir)
	} else {
		conf, err = hadoopconf.Load()
	}
	if err != nil {
		return nil, &ConfigError{err}
	}
	return conf, nil
}

// Session talks to one cluster as one user: it logs in to Kerberos at most
// once and connects to the ResourceManager and the default HDFS on first
// use (client.Client's connections). It is not safe for concurrent use.
type Session struct {
	Conf *hadoopconf.Config
	// User acts on an insecure cluster (empty: HADOOP_USER_NAME or the OS
	// user); Principal and Keytab log in to a Kerberized one (see Login).
	User, Principal, Keytab string
	// CallTimeout bounds the login and connecting to HDFS; dialing one
	// ResourceManager gives up after a third of it, so that failover across
	// an HA pair still fits.
	CallTimeout time.Duration

	login *security.KerberosLogin
	// loginErr is the login's error: tried once, told every time.
	loginErr error
	loggedIn bool
	rm       *yarn.ApplicationClient
	fs       *hdfs.FS
}

// Login logs in once as a Kerberized cluster needs (see Login); nil on an
// insecure cluster. The login is bounded by CallTimeout alone: it serves
// every later call, whatever the caller's context.
func (s *Session) Login() (*security.KerberosLogin, error) {
	if !s.loggedIn {
		ctx, cancel := context.WithTimeout(context.Background(), s.CallTimeout)
		defer cancel()
		s.login, s.loginErr = Login(ctx, s.Conf, s.Principal, s.Keytab)
		var ke *security.KerberosError
		if s.loginErr != nil && !errors.As(s.loginErr, &ke) {
			// Not the login itself: the configuration (auth_to_local).
			s.loginErr = &ConfigError{s.loginErr}
		}
		s.loggedIn = true
	}
	return s.login, s.loginErr
}

// RM is the ResourceManager's client, made (lazily connecting) on first
// use.
func (s *Session) RM() (*yarn.ApplicationClient, error) {
	if s.rm != nil {
		return s.rm, nil
	}
	login, err := s.Login()
	if err != nil {
		return nil, err
	}
	rm, err := RM(s.Conf, login, yarn.ClientOptions{User: s.User, DialTimeout: s.CallTimeout / 3})
	if err != nil {
		return nil, &ConfigError{err}
	}
	s.rm = rm
	return rm, nil
}

// HDFS connects to the default filesystem on first use, bounded by
// CallTimeout (or ctx).
func (s *Session) HDFS(ctx context.Context) (*hdfs.FS, error) {
	if s.fs != nil {
		return s.fs, nil
	}
	login, err := s.Login()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.CallTimeout)
	defer cancel()
	user := s.User
	if user == "" {
		user = ipc.DefaultUser()
	}
	fs, err := HDFS(ctx, s.Conf, login, hdfs.Options{User: user, ConnectTimeout: s.CallTimeout})
	if err != nil {
		return nil, err
	}
	s.fs = fs
	return fs, nil
}

// Close drops the connections.
func (s *Session) Close() error {
	var errs []error
	if s.rm != nil {
		errs = append(errs, s.rm.Close())
		s.rm = nil
	}
	if s.fs != nil {
		errs = append(errs, s.fs.Close())
		s.fs = nil
	}
	return errors.Join(errs...)
}
