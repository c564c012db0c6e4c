package main

import (
	"context"
	"os"

	"github.com/tfyarn/tfyarn/internal/connect"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// loadConf reads --conf-dir, or else what the environment names
// (HADOOP_CONF_DIR, YARN_CONF_DIR, HADOOP_HOME), remembering which for messages.
func (e *env) loadConf() (*hadoopconf.Config, error) {
	if e.confDir != "" {
		e.confFrom = "--conf-dir=" + e.confDir
		if st, err := os.Stat(e.confDir); err != nil || !st.IsDir() {
			return nil, usagef("--conf-dir %s is not a directory; point it at the directory holding core-site.xml and yarn-site.xml", e.confDir)
		}
		conf, err := hadoopconf.LoadDir(e.confDir)
		if err != nil {
			return nil, &confError{err}
		}
		return conf, nil
	}
	e.confFrom = hadoopconf.EnvHadoopConfDir + "=" + os.Getenv(hadoopconf.EnvHadoopConfDir)
	if os.Getenv(hadoopconf.EnvHadoopConfDir) == "" {
		e.confFrom = "the environment"
	}
	conf, err := hadoopconf.Load()
	if err != nil {
		return nil, &confError{err}
	}
	return conf, nil
}

// rmClient connects (lazily) to the ResourceManager. Dialing one address
// gives up after a third of --timeout, so that failover across an HA pair
// still fits in the command's deadline.
func (e *env) rmClient() (*yarn.ApplicationClient, *hadoopconf.Config, error) {
	conf, err := e.loadConf()
	if err != nil {
		return nil, nil, err
	}
	login, err := e.kerberos(conf)
	if err != nil {
		return nil, nil, err
	}
	c, err := connect.RM(conf, login, yarn.ClientOptions{DialTimeout: e.timeout / 3})
	if err != nil {
		return nil, nil, &confError{err}
	}
	return c, conf, nil
}

// kerberos logs in once per command as a Kerberized cluster needs (see
// connect.Login); nil on an insecure cluster.
func (e *env) kerberos(conf *hadoopconf.Config) (*security.KerberosLogin, error) {
	if !e.loggedIn {
		ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
		defer cancel()
		e.login, e.loginErr = connect.Login(ctx, conf, e.principal, e.keytab)
		e.loggedIn = true
	}
	return e.login, e.loginErr
}

// rpcContext bounds the RM calls of one command by --timeout.
func (e *env) rpcContext(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, e.timeout)
}

// cacheFS connects to the default filesystem as the Hadoop user
// (HADOOP_USER_NAME, else the OS user), bounded by --timeout.
func (e *env) cacheFS(parent context.Context) (*hdfs.FS, error) {
	conf, err := e.loadConf()
	if err != nil {
		return nil, err
	}
	login, err := e.kerberos(conf)
	if err != nil {
		return nil, err
	}
	ctx, cancel := e.rpcContext(parent)
	defer cancel()
	return connect.HDFS(ctx, conf, login, hdfs.Options{User: ipc.DefaultUser(), ConnectTimeout: e.timeout})
}
