package hadoopconf

import (
	"fmt"
	"strings"
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
	levels := c.GetStrings(KeyRPCProtection)
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
