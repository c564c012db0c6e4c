// Package connect logs in to a cluster as its configuration asks (Kerberos
// or not) and connects to its ResourceManager(s) and default HDFS as that
// login: what client's Client and Submit, and the tests that talk to a
// Kerberized cluster, share.
package connect

import (
	"context"
	"fmt"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarn"
)

// Login logs in as a Kerberized cluster (hadoop.security.authentication=
// kerberos in conf) needs: from keytab as principal when keytab is set, else
// from the user's ticket cache (KRB5CCNAME, else the default cache; krb5.conf
// from KRB5_CONFIG, else /etc/krb5.conf). On an insecure cluster it returns
// nil, and refuses a keytab, which could only be a mistake. The login's
// User is the principal mapped by the cluster's auth_to_local rules.
func Login(ctx context.Context, conf *hadoopconf.Config, principal, keytab string) (*security.KerberosLogin, error) {
	if !conf.SecurityEnabled() {
		if keytab != "" || principal != "" {
			return nil, &security.KerberosError{
				Op: fmt.Sprintf("--principal/--keytab were given, but the cluster configuration says %s=%s (from %s)",
					hadoopconf.KeyAuthentication, conf.AuthMethod(), conf.Source(hadoopconf.KeyAuthentication)),
				Hint: "drop them, or point " + hadoopconf.EnvHadoopConfDir + " at the Kerberized cluster's configuration",
			}
		}
		return nil, nil
	}
	rules, err := conf.AuthToLocal()
	if err != nil {
		return nil, err
	}
	// Without a keytab, a principal alone picks the ticket cache's
	// identity: it must match.
	return security.LoginKerberos(ctx, security.KerberosOptions{Principal: principal, Keytab: keytab, AuthToLocal: rules})
}

// RMOptions are opts plus what the login needs: SASL GSSAPI to the
// ResourceManager(s), as the principal. A nil login leaves opts as they are.
func RMOptions(conf *hadoopconf.Config, login *security.KerberosLogin, opts yarn.ClientOptions) (yarn.ClientOptions, error) {
	if login == nil {
		return opts, nil
	}
	addrs, err := conf.RMAddresses(hadoopconf.RMClient)
	if err != nil {
		return opts, err
	}
	// Each ResourceManager is checked against its own principal (_HOST
	// replaced by its host), whichever one a failover reaches.
	principals := make(map[string]string, len(addrs))
	for _, a := range addrs {
		p, err := conf.RMPrincipalFor(a)
		if err != nil {
			return opts, err
		}
		principals[a] = p
	}
	protection, err := conf.RPCProtection()
	if err != nil {
		return opts, err
	}
	// The RM names users by their short name (list filters, reports); the
	// connection itself announces the full principal (ipc.Kerberos).
	opts.User = login.User
	opts.SASL = []ipc.SaslMechanism{ipc.KerberosAuth(login.Client, principals, protection)}
	opts.RequireSASL = true
	return opts, nil
}

// RM connects (lazily) to the ResourceManager as login (nil on an
// insecure cluster).
func RM(conf *hadoopconf.Config, login *security.KerberosLogin, opts yarn.ClientOptions) (*yarn.ApplicationClient, error) {
	opts, err := RMOptions(conf, login, opts)
	if err != nil {
		return nil, err
	}
	return yarn.NewApplicationClient(conf, opts)
}

// HDFS connects to the default filesystem as login, or as user on an
// insecure cluster.
func HDFS(ctx context.Context, conf *hadoopconf.Config, login *security.KerberosLogin, opts hdfs.Options) (*hdfs.FS, error) {
	opts.Kerberos = login
	if login != nil {
		opts.User = login.User
	}
	return hdfs.ConnectOptions(ctx, conf, opts)
}
