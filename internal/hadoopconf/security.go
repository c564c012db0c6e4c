package hadoopconf

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/tfyarn/tfyarn/internal/authtolocal"
)

// RPC protection levels (hadoop.rpc.protection), mapping to SASL QOP
// auth, auth-int and auth-conf.
const (
	ProtectionAuthentication = "authentication"
	ProtectionIntegrity      = "integrity"
	ProtectionPrivacy        = "privacy"
)

// AuthMethod returns hadoop.security.authentication lower-cased
// ("simple" or "kerberos"; default simple).
func (c *Config) AuthMethod() string {
	return strings.ToLower(c.GetDefault(KeyAuthentication, "simple"))
}

// SecurityEnabled reports whether the cluster uses Kerberos.
func (c *Config) SecurityEnabled() bool { return c.AuthMethod() == "kerberos" }

// RPCProtection returns the accepted protection levels in configured order
// (the client offers them in this order during SASL negotiation).
func (c *Config) RPCProtection() ([]string, error) {
	levels, err := c.lookupStrings(KeyRPCProtection)
	if err != nil {
		return nil, err
	}
	if len(levels) == 0 {
		return []string{ProtectionAuthentication}, nil
	}
	out := make([]string, 0, len(levels))
	for _, l := range levels {
		switch ll := strings.ToLower(l); ll {
		case ProtectionAuthentication, ProtectionIntegrity, ProtectionPrivacy:
			out = append(out, ll)
		default:
			return nil, c.badValue(KeyRPCProtection, l, fmt.Sprintf("one of %s, %s, %s",
				ProtectionAuthentication, ProtectionIntegrity, ProtectionPrivacy))
		}
	}
	return out, nil
}

// Token service prefix of an HA (logical) HDFS URI (HAUtilClient).
const haHDFSTokenPrefix = "ha-hdfs:"

// ServerPrincipal is a Kerberos principal pattern from the configuration
// (e.g. "nn/_HOST@EXAMPLE.COM") for the server at hostport, with _HOST
// replaced by the server's lower-cased host name, as Hadoop's
// SecurityUtil.getServerPrincipal does: only a host component that is
// exactly _HOST (service/_HOST@REALM, or service/_HOST) is replaced; any
// other pattern is returned as it is. An IP address is looked up first;
// 0.0.0.0 (a wildcard bind address) becomes this machine's name.
func ServerPrincipal(pattern, hostport string) string {
	service, rest, ok := strings.Cut(pattern, "/")
	hostPart, realm, hasRealm := strings.Cut(rest, "@")
	if !ok || hostPart != "_HOST" || strings.Contains(service, "@") {
		return pattern
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	switch {
	case host == "" || host == "0.0.0.0":
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	case net.ParseIP(host) != nil:
		if names, err := net.LookupAddr(host); err == nil && len(names) > 0 {
			host = strings.TrimSuffix(names[0], ".")
		}
	}
	out := service + "/" + strings.ToLower(host)
	if hasRealm {
		out += "@" + realm
	}
	return out
}

// RMPrincipalFor is yarn.resourcemanager.principal for the RM at rmAddr, with
// _HOST replaced. It is also the renewer of the delegation tokens a job
// hands to YARN (Hadoop's Master.getMasterPrincipal).
func (c *Config) RMPrincipalFor(rmAddr string) (string, error) {
	p, ok, err := c.Lookup(KeyRMPrincipal)
	if err != nil {
		return "", err
	}
	if !ok || strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("hadoopconf: %s is not set, but the cluster uses Kerberos; set it in yarn-site.xml (your cluster's value)", KeyRMPrincipal)
	}
	return ServerPrincipal(strings.TrimSpace(p), rmAddr), nil
}

// NameNodePrincipalFor is dfs.namenode.kerberos.principal for the NameNode
// at addr, with _HOST replaced.
func (c *Config) NameNodePrincipalFor(addr string) (string, error) {
	p, ok, err := c.Lookup(KeyNameNodePrincipal)
	if err != nil {
		return "", err
	}
	if !ok || strings.TrimSpace(p) == "" {
		return "", fmt.Errorf("hadoopconf: %s is not set, but the cluster uses Kerberos; set it in hdfs-site.xml (your cluster's value)", KeyNameNodePrincipal)
	}
	return ServerPrincipal(strings.TrimSpace(p), addr), nil
}

// DataTransferProtection is dfs.data.transfer.protection's first level
// (empty when unset): SASL on DataNode connections.
func (c *Config) DataTransferProtection() string {
	levels := c.GetStrings("dfs.data.transfer.protection")
	if len(levels) == 0 {
		return ""
	}
	return strings.ToLower(levels[0])
}

// TokenService is the service field Hadoop gives a delegation token of this
// filesystem: "ha-hdfs:<nameservice>" for a logical URI, else the
// NameNode's resolved "ip:port" (hadoop.security.token.service.use_ip).
func (t HDFSTarget) TokenService() string {
	if t.Nameservice != "" {
		return haHDFSTokenPrefix + t.Nameservice
	}
	return IPTokenService(t.Addresses[0])
}

// IPTokenService is SecurityUtil.buildTokenService for host:port: the
// host's first IPv4 address (else any), and the port.
func IPTokenService(hostport string) string {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport
	}
	if net.ParseIP(host) == nil {
		if ips, err := net.LookupIP(host); err == nil && len(ips) > 0 {
			pick := ips[0]
			for _, ip := range ips {
				if ip.To4() != nil {
					pick = ip
					break
				}
			}
			host = pick.String()
		}
	}
	return net.JoinHostPort(host, port)
}

// AuthToLocal returns the rules that map Kerberos principals to user names
// (hadoop.security.auth_to_local, evaluated as
// hadoop.security.auth_to_local.mechanism says). Unset or empty means
// DEFAULT, as on a Kerberized Hadoop cluster. An error names the setting,
// its file and the rule Hadoop would refuse (or tfyarn cannot evaluate).
func (c *Config) AuthToLocal() (*authtolocal.Rules, error) {
	mechText, _, err := c.Lookup(authtolocal.KeyMechanism)
	if err != nil {
		return nil, err
	}
	mech, err := authtolocal.ParseMechanism(mechText)
	if err != nil {
		return nil, fmt.Errorf("hadoopconf: %v (from %s); use hadoop or mit", err, c.where(authtolocal.KeyMechanism))
	}
	text, _, err := c.Lookup(authtolocal.KeyRules)
	if err != nil {
		return nil, err
	}
	if text == "" {
		rules := authtolocal.Default(mech)
		rules.Source = authtolocal.KeyRules + " is unset: DEFAULT"
		return rules, nil
	}
	rules, err := authtolocal.Parse(text, mech)
	if err != nil {
		return nil, fmt.Errorf("hadoopconf: %s (from %s): %v; fix the rule", authtolocal.KeyRules, c.where(authtolocal.KeyRules), err)
	}
	rules.Source = authtolocal.KeyRules + " from " + c.where(authtolocal.KeyRules)
	return rules, nil
}
