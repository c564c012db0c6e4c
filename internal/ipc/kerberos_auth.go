package ipc

import krbclient "github.com/jcmturner/gokrb5/v8/client"

// KerberosAuth is the KERBEROS/GSSAPI mechanism for one logical server
// behind one or more addresses (HA): principals maps each configured address
// to the principal the server there must have (_HOST replaced by that
// address's host), and every connection is checked against the principal of
// the address it dialled, at the protection levels of hadoop.rpc.protection.
func KerberosAuth(cl *krbclient.Client, principals map[string]string, protection []string) SaslMechanism {
	return &Kerberos{Client: cl, ServerPrincipals: principals, Protection: protection}
}
