package ipc

import krbclient "github.com/jcmturner/gokrb5/v8/client"

// KerberosAuth is the KERBEROS/GSSAPI mechanism for a server that has one
// of principals (one per configured address, _HOST replaced), at the
// protection levels of hadoop.rpc.protection.
func KerberosAuth(cl *krbclient.Client, principals []string, protection []string) SaslMechanism {
	k := &Kerberos{Client: cl, Protection: protection}
	if len(principals) == 1 {
		k.ServerPrincipal = principals[0]
	}
	return k
}
