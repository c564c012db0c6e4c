package client

import (
	"time"

	"github.com/tfyarn/tfyarn/internal/connect"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
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

// Client talks to one cluster as one user: applications (List,
// Application, Status, Kill), the cluster's nodes and queues (Cluster) and
// the user's HDFS cache (Cache, CleanCache). It connects on first use and
// logs in to Kerberos at most once (internal/connect's Session). Close it
// when done. Its methods are not safe for concurrent use.
type Client struct {
	conn    Connection
	conf    *hadoopconf.Config
	session *connect.Session
}

// Connect loads the client configuration conn names; it dials nothing yet.
// Its errors are a configuration that could not be loaded or used;
// ExplainError words them.
func Connect(conn Connection) (*Client, error) {
	conn = conn.withDefaults()
	conf := conn.conf
	if conf == nil {
		var err error
		if conf, err = connect.LoadConf(conn.ConfDir); err != nil {
			return nil, err
		}
	}
	return &Client{conn: conn, conf: conf, session: &connect.Session{Conf: conf, User: conn.User,
		Principal: conn.Principal, Keytab: conn.Keytab, CallTimeout: conn.CallTimeout}}, nil
}

// Close drops the connections.
func (c *Client) Close() error { return c.session.Close() }

// User is who the client acts as: the Kerberos principal's short name, else
// Connection.User, else HADOOP_USER_NAME or the OS user.
func (c *Client) User() (string, error) {
	rm, err := c.session.RM()
	if err != nil {
		return "", err
	}
	return rm.User(), nil
}
