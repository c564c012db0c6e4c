package client

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/connect"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// EnvHadoopConfDir is the environment variable naming the Hadoop client
// configuration's directory, which an empty Connection.ConfDir reads.
const EnvHadoopConfDir = hadoopconf.EnvHadoopConfDir

// Connection says where the cluster is and who talks to it. Zero values
// take the defaults.
type Connection struct {
	// ConfDir is the Hadoop client configuration directory (core-site.xml,
	// yarn-site.xml, hdfs-site.xml); empty means the environment's
	// (HADOOP_CONF_DIR, else YARN_CONF_DIR, else HADOOP_HOME's).
	ConfDir string
	// User acts on an insecure cluster; empty means HADOOP_USER_NAME, else
	// the OS user. A Kerberos login acts as its principal's short name.
	User string
	// Principal and Keytab log in to a Kerberized cluster: with a Keytab,
	// as Principal from it (and the ApplicationMaster of a job submitted so
	// keeps its HDFS delegation tokens fresh past their maximum lifetime);
	// without one, from the user's ticket cache (kinit), which must hold
	// Principal when it is set. On an insecure cluster they are refused.
	Principal string
	Keytab    string
	// CallTimeout bounds each ResourceManager and HDFS call, and the
	// Kerberos login (DefaultCallTimeout). Dialing one ResourceManager
	// gives up after a third of it, so that failover across an HA pair
	// still fits.
	CallTimeout time.Duration
	// PollInterval is how often a Submission's Wait asks for the
	// application's report (DefaultPollInterval).
	PollInterval time.Duration

	// conf, when set, is used instead of loading ConfDir (tests).
	conf *hadoopconf.Config
}

func (c Connection) withDefaults() Connection {
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	return c
}

// configError is a Hadoop client configuration that could not be loaded or
// used (a missing directory, bad XML, no ResourceManager address).
type configError struct{ Err error }

func (e *configError) Error() string { return strings.TrimPrefix(e.Err.Error(), "hadoopconf: ") }
func (e *configError) Unwrap() error { return e.Err }

// Client talks to one cluster as one user: applications (List,
// Application, Status, Kill), the cluster's nodes and queues (Cluster) and
// the user's HDFS cache (Cache, CleanCache). It connects on first use and
// logs in to Kerberos at most once. Close it when done. Its methods are not
// safe for concurrent use.
type Client struct {
	conn  Connection
	conf  *hadoopconf.Config
	login *security.KerberosLogin
	// loginErr is the login's error: tried once, told every time.
	loginErr error
	loggedIn bool
	rm       *yarn.ApplicationClient
	fs       *hdfs.FS
}

// Connect loads the client configuration conn names; it dials nothing yet.
// Its errors are a configuration that could not be loaded or used;
// ExplainError words them.
func Connect(conn Connection) (*Client, error) {
	conn = conn.withDefaults()
	conf, err := conn.load()
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn, conf: conf}, nil
}

// load loads the client configuration: conf if set, else ConfDir's, else
// the environment's.
func (c Connection) load() (*hadoopconf.Config, error) {
	if c.conf != nil {
		return c.conf, nil
	}
	var conf *hadoopconf.Config
	var err error
	if c.ConfDir != "" {
		conf, err = hadoopconf.LoadDir(c.ConfDir)
	} else {
		conf, err = hadoopconf.Load()
	}
	if err != nil {
		return nil, &configError{err}
	}
	return conf, nil
}

// Close drops the connections.
func (c *Client) Close() error {
	var errs []error
	if c.rm != nil {
		errs = append(errs, c.rm.Close())
		c.rm = nil
	}
	if c.fs != nil {
		errs = append(errs, c.fs.Close())
		c.fs = nil
	}
	return errors.Join(errs...)
}

// kerberos logs in once as a Kerberized cluster needs (see connect.Login); nil on
// an insecure cluster. The login is bounded by CallTimeout alone: it
// serves every later call, whatever the caller's context.
func (c *Client) kerberos() (*security.KerberosLogin, error) {
	if !c.loggedIn {
		ctx, cancel := context.WithTimeout(context.Background(), c.conn.CallTimeout)
		defer cancel()
		c.login, c.loginErr = connect.Login(ctx, c.conf, c.conn.Principal, c.conn.Keytab)
		var ke *security.KerberosError
		if c.loginErr != nil && !errors.As(c.loginErr, &ke) {
			// Not the login itself: the configuration (auth_to_local).
			c.loginErr = &configError{c.loginErr}
		}
		c.loggedIn = true
	}
	return c.login, c.loginErr
}

// rmClient is the ResourceManager's client, made (lazily connecting) on
// first use.
func (c *Client) rmClient() (*yarn.ApplicationClient, error) {
	if c.rm != nil {
		return c.rm, nil
	}
	login, err := c.kerberos()
	if err != nil {
		return nil, err
	}
	rm, err := connect.RM(c.conf, login, yarn.ClientOptions{User: c.conn.User, DialTimeout: c.conn.CallTimeout / 3})
	if err != nil {
		return nil, &configError{err}
	}
	c.rm = rm
	return rm, nil
}

// hdfsFS connects to the default filesystem on first use, bounded by
// CallTimeout (or ctx).
func (c *Client) hdfsFS(ctx context.Context) (*hdfs.FS, error) {
	if c.fs != nil {
		return c.fs, nil
	}
	login, err := c.kerberos()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.conn.CallTimeout)
	defer cancel()
	user := c.conn.User
	if user == "" {
		user = ipc.DefaultUser()
	}
	fs, err := connect.HDFS(ctx, c.conf, login, hdfs.Options{User: user, ConnectTimeout: c.conn.CallTimeout})
	if err != nil {
		return nil, err
	}
	c.fs = fs
	return fs, nil
}

// User is who the client acts as: the Kerberos principal's short name, else
// Connection.User, else HADOOP_USER_NAME or the OS user.
func (c *Client) User() (string, error) {
	rm, err := c.rmClient()
	if err != nil {
		return "", err
	}
	return rm.User(), nil
}
