package hdfs

import (
	"fmt"
	"strings"
	"time"

	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/ipc"
	"github.com/tfyarn/tfyarn/internal/security"
)

// nnAuth is how this process authenticates to one filesystem's NameNodes.
type nnAuth struct {
	user      string              // the HDFS user: the principal's short name under Kerberos
	effective string              // the user announced in the connection context
	sasl      []ipc.SaslMechanism // empty: SIMPLE
	spn       string              // the NameNode's principal without realm, _HOST kept (colinmarc)
	tokenOnly bool                // delegation tokens, no Kerberos login
}

// nameNodeAuth picks the authentication for target: SIMPLE on an insecure
// cluster, SASL GSSAPI with a Kerberos login, else DIGEST-MD5 with an HDFS
// delegation token for target.
func nameNodeAuth(conf *hadoopconf.Config, target hadoopconf.HDFSTarget, opts Options) (nnAuth, error) {
	if !conf.SecurityEnabled() {
		if opts.Kerberos != nil {
			return nnAuth{}, fmt.Errorf("hdfs: a Kerberos login was given, but the configuration says %s=%s (from %s); use the cluster's configuration (HADOOP_CONF_DIR)",
				hadoopconf.KeyAuthentication, conf.AuthMethod(), conf.Source(hadoopconf.KeyAuthentication))
		}
		return nnAuth{user: opts.User, effective: opts.User}, nil
	}
	protection, err := conf.RPCProtection()
	if err != nil {
		return nnAuth{}, err
	}
	if opts.Kerberos != nil {
		principals, err := nameNodePrincipals(conf, target)
		if err != nil {
			return nnAuth{}, err
		}
		// colinmarc replaces _HOST itself and wants no realm.
		pattern, _ := conf.NameNodePrincipal()
		spn, _, _ := strings.Cut(strings.TrimSpace(pattern), "@")
		mech := ipc.KerberosAuth(opts.Kerberos.Client, principals, protection)
		return nnAuth{user: opts.Kerberos.User, effective: opts.Kerberos.Principal, sasl: []ipc.SaslMechanism{mech}, spn: spn}, nil
	}
	toks := tokensFor(opts.Tokens, target)
	if len(toks) == 0 {
		return nnAuth{}, fmt.Errorf("hdfs: the cluster uses Kerberos (%s=kerberos) and there is neither a Kerberos login nor an HDFS delegation token for %s",
			hadoopconf.KeyAuthentication, target.URI)
	}
	mech := &ipc.DigestMD5{Tokens: toks, Kind: security.KindHDFSDelegation, Services: []string{target.TokenService()}, Protection: protection}
	return nnAuth{user: opts.User, effective: opts.User, sasl: []ipc.SaslMechanism{mech}, tokenOnly: true}, nil
}

// nameNodePrincipals are the principals the NameNodes of target have, by
// address (_HOST replaced by each address's host): every connection, also
// after a failover, is checked against the principal of the address it
// dialled.
func nameNodePrincipals(conf *hadoopconf.Config, target hadoopconf.HDFSTarget) (map[string]string, error) {
	out := make(map[string]string, len(target.Addresses))
	for _, a := range target.Addresses {
		p, err := conf.NameNodePrincipalFor(a)
		if err != nil {
			return nil, err
		}
		out[a] = p
	}
	return out, nil
}

// tokensFor are the HDFS delegation tokens whose service names target.
func tokensFor(tokens []security.Token, target hadoopconf.HDFSTarget) []security.Token {
	want := target.TokenService()
	var out []security.Token
	for _, t := range tokens {
		if t.Kind == security.KindHDFSDelegation && t.Service == want {
			out = append(out, t)
		}
	}
	return out
}

// nameNodeRPCConfig is how our own client reaches target's NameNodes.
func nameNodeRPCConfig(target hadoopconf.HDFSTarget, auth nnAuth, dial, call time.Duration) *ipc.Config {
	return &ipc.Config{
		Addresses:   target.Addresses,
		Protocol:    clientProtocol,
		User:        auth.effective,
		SASL:        auth.sasl,
		RequireSASL: len(auth.sasl) > 0,
		DialTimeout: dial,
		CallTimeout: call,
	}
}

func newNameNodeRPC(target hadoopconf.HDFSTarget, auth nnAuth, dial, call time.Duration) (*ipc.Client, error) {
	c, err := ipc.NewClient(*nameNodeRPCConfig(target, auth, dial, call))
	if err != nil {
		return nil, fmt.Errorf("hdfs: %w", err)
	}
	return c, nil
}
