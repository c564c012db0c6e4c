package ipc

import (
	"context"
	"fmt"
	"strings"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/iana/errorcode"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/tfyarn/tfyarn/internal/security"
)

// MechGSSAPI is the SASL mechanism behind Hadoop's KERBEROS auth method.
const MechGSSAPI = "GSSAPI"

// Kerberos is the KERBEROS/GSSAPI mechanism (RFC 4752 over the krb5 GSS
// mechanism, RFC 4121), client side, as Hadoop's SaslRpcClient drives the
// JDK's GssKrb5Client: an AP-REQ with mutual authentication, the AP-REP
// checked, then the security layer (auth, auth-int or auth-conf) chosen in
// a pair of Wrap tokens. Only the AES enctypes are supported (RFC 4121
// tokens); des3 and rc4 sessions are refused, as JDK 17 refuses them.
type Kerberos struct {
	// Client is a logged-in gokrb5 client (from a ticket cache or keytab).
	Client *krbclient.Client
	// ServerPrincipal is the principal the server must have, from the
	// client's configuration with _HOST already replaced (e.g.
	// "nn/host1.example.com@EXAMPLE.COM"; the realm is optional). Empty
	// accepts the offer's protocol/serverId as is. ServerPrincipals, when
	// set, takes its place.
	ServerPrincipal string
	// ServerPrincipals is the principal each server must have, by the
	// address dialled (SaslOffer.Addr), for a client with several servers
	// (ResourceManager or NameNode HA): after a failover the server is
	// checked against its own address's principal. An address it does not
	// name is refused.
	ServerPrincipals map[string]string
	// Protection lists the acceptable protection levels, in Hadoop's names
	// (hadoop.rpc.protection: "authentication", "integrity", "privacy") or
	// as SASL QOPs. The strongest level both sides accept wins; empty
	// accepts anything the server offers, strongest first.
	Protection []string
	// MaxBuf is the receive buffer size announced to the server; 0 means
	// 65536, Java's default.
	MaxBuf int
	// OnComplete, when set, learns the negotiated QOP; for logs and tests.
	OnComplete func(qop string)

	// ticket replaces Client.GetServiceTicket in tests.
	ticket func(spn string) (messages.Ticket, types.EncryptionKey, error)
}

// Method implements SaslMechanism.
func (k *Kerberos) Method() string { return MethodKerberos }

// Mechanism implements SaslMechanism.
func (k *Kerberos) Mechanism() string { return MechGSSAPI }

// Start implements SaslMechanism: it checks the server's principal against
// the configured one and gets the service ticket for it.
func (k *Kerberos) Start(ctx context.Context, offer SaslOffer) (SaslSession, error) {
	if k.Client == nil || k.Client.Credentials == nil {
		return nil, fmt.Errorf("%w: no Kerberos login", ErrNoCredentials)
	}
	qops, err := krbQOPs(k.Protection)
	if err != nil {
		return nil, err
	}
	maxBuf := k.MaxBuf
	if maxBuf <= 0 {
		maxBuf = defaultMaxBuf
	}
	if maxBuf > 0xffffff {
		return nil, fmt.Errorf("ipc: kerberos: MaxBuf %d does not fit the 3-byte SASL field", maxBuf)
	}
	spn, err := k.serverPrincipal(offer)
	if err != nil {
		return nil, err
	}
	tkt, key, err := k.serviceTicket(ctx, spn)
	if err != nil {
		return nil, err
	}
	if !cfxEnctype(key.KeyType) {
		return nil, fmt.Errorf("ipc: kerberos: the service ticket for %s has a session key of type %s", spn, unsupportedEnctype(key.KeyType))
	}
	creds := k.Client.Credentials
	return &krbSession{
		cname:      creds.CName(),
		crealm:     creds.Realm(),
		tkt:        tkt,
		sessKey:    key,
		qops:       qops,
		recvMaxBuf: maxBuf,
		onComplete: k.OnComplete,
	}, nil
}

func krbQOPs(levels []string) ([]string, error) {
	for _, l := range levels {
		switch strings.ToLower(strings.TrimSpace(l)) {
		case "authentication", qopAuth, "integrity", qopAuthInt, "privacy", qopAuthConf:
		default:
			return nil, fmt.Errorf("ipc: kerberos: unknown protection level %q", l)
		}
	}
	return qopPreference(levels)
}

// serverPrincipal follows SaslRpcClient.getServerPrincipal: the offer names
// protocol/serverId, whose realm is the host's realm (domain_realm, else the
// default realm), and it must equal the configured principal.
func (k *Kerberos) serverPrincipal(offer SaslOffer) (string, error) {
	if offer.Protocol == "" || offer.ServerID == "" {
		return "", fmt.Errorf("ipc: kerberos: the server offered KERBEROS without a principal (protocol %q, serverId %q)", offer.Protocol, offer.ServerID)
	}
	spn := offer.Protocol + "/" + offer.ServerID
	configured := k.ServerPrincipal
	if k.ServerPrincipals != nil {
		p, ok := k.ServerPrincipals[offer.Addr]
		if !ok || p == "" {
			return "", fmt.Errorf("ipc: kerberos: no server principal is configured for %s (the server there offers %s); check the cluster's addresses in the configuration", offer.Addr, spn)
		}
		configured = p
	}
	if configured == "" {
		return spn, nil
	}
	realm := k.hostRealm(offer.ServerID)
	offered := spn
	if realm != "" {
		offered += "@" + realm
	}
	name, confRealm := configured, ""
	if i := strings.LastIndexByte(name, '@'); i >= 0 {
		name, confRealm = name[:i], name[i+1:]
	}
	if strings.Contains(name, "_HOST") {
		return "", fmt.Errorf("ipc: kerberos: configured server principal %s still contains _HOST; replace it with the server's host name", configured)
	}
	if !strings.Contains(name, "/") {
		return "", fmt.Errorf("ipc: kerberos: configured server principal %s has no host part (want service/host@REALM)", configured)
	}
	if name != spn || (confRealm != "" && confRealm != realm) {
		return "", &PrincipalMismatchError{Offered: offered, Configured: configured}
	}
	return spn, nil
}

// hostRealm is the realm Java's PrincipalName gives a KRB_NT_SRV_HST name.
func (k *Kerberos) hostRealm(host string) string {
	if cfg := k.Client.Config; cfg != nil {
		if r := cfg.ResolveRealm(host); r != "" {
			return r
		}
		if r := cfg.LibDefaults.DefaultRealm; r != "" {
			return r
		}
	}
	return k.Client.Credentials.Realm()
}

// serviceTicket asks the KDC (or the client's cache) for a ticket to spn;
// gokrb5 takes no context, so a cancelled ctx abandons the request.
func (k *Kerberos) serviceTicket(ctx context.Context, spn string) (messages.Ticket, types.EncryptionKey, error) {
	get := k.ticket
	if get == nil {
		get = k.Client.GetServiceTicket
	}
	type result struct {
		tkt messages.Ticket
		key types.EncryptionKey
		err error
	}
	ch := make(chan result, 1)
	go func() {
		tkt, key, err := get(spn)
		ch <- result{tkt, key, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return r.tkt, r.key, fmt.Errorf("ipc: kerberos: service ticket for %s: %w", spn, newKerberosError(r.err))
		}
		return r.tkt, r.key, nil
	case <-ctx.Done():
		return messages.Ticket{}, types.EncryptionKey{}, fmt.Errorf("ipc: kerberos: service ticket for %s: %w", spn, ctx.Err())
	}
}

// KerberosError is a Kerberos protocol error (a KRB-ERROR from the KDC or
// the server) with its RFC 4120 code and a readable explanation. It unwraps
// to a messages.KRBError carrying the code and to the original error.
type KerberosError struct {
	Code int32  // RFC 4120 error code, e.g. 7 for KDC_ERR_S_PRINCIPAL_UNKNOWN
	Text string // what it means, e.g. "server principal unknown to the KDC"
	Err  error  // the underlying gokrb5 error
}

func (e *KerberosError) Error() string {
	return fmt.Sprintf("%s [%s]: %v", e.Text, errorcode.Lookup(e.Code), e.Err)
}

// Unwrap lets errors.As find the messages.KRBError and errors.Is the cause.
func (e *KerberosError) Unwrap() []error {
	return []error{messages.KRBError{ErrorCode: e.Code}, e.Err}
}

// newKerberosError returns err as a *KerberosError when it carries a
// Kerberos error code, and err itself otherwise.
func newKerberosError(err error) error {
	code, ok := security.KRBErrorCode(err)
	if !ok {
		return err
	}
	return &KerberosError{Code: code, Text: krbErrorText(code), Err: err}
}

func krbErrorText(code int32) string {
	switch code {
	case errorcode.KDC_ERR_S_PRINCIPAL_UNKNOWN:
		return "server principal unknown to the KDC (check the configured server principal and that the host name resolves to its canonical name)"
	case errorcode.KDC_ERR_C_PRINCIPAL_UNKNOWN:
		return "client principal unknown to the KDC"
	case errorcode.KRB_AP_ERR_SKEW:
		return "clock skew too great between this host and the KDC or server (synchronise the clocks)"
	case errorcode.KRB_AP_ERR_TKT_EXPIRED, errorcode.KDC_ERR_TGT_REVOKED:
		return "Kerberos ticket expired or revoked (kinit again or renew the keytab login)"
	case errorcode.KDC_ERR_ETYPE_NOSUPP:
		return "no encryption type in common with the KDC"
	case errorcode.KDC_ERR_PREAUTH_FAILED, errorcode.KRB_AP_ERR_BAD_INTEGRITY:
		return "wrong password or key (integrity check failed)"
	case errorcode.KRB_AP_ERR_MODIFIED:
		return "the server could not decrypt the ticket (its keytab is out of date or the principal is wrong)"
	case errorcode.KRB_AP_ERR_REPEAT:
		return "the server saw this authenticator before (replay)"
	case errorcode.KDC_ERR_CLIENT_REVOKED:
		return "client credentials revoked or locked out"
	case errorcode.KDC_ERR_POLICY:
		return "KDC policy rejects the request"
	}
	return "Kerberos error"
}

// PrincipalMismatchError: the server authenticates as another principal
// than the client's configuration names for it (yarn.resourcemanager.
// principal, dfs.namenode.kerberos.principal): a wrong configuration, or a
// server that is not the one it claims to be.
type PrincipalMismatchError struct {
	Offered    string // what the server offered (protocol/serverId@realm)
	Configured string // what the configuration says, _HOST replaced
}

func (e *PrincipalMismatchError) Error() string {
	return fmt.Sprintf("ipc: kerberos: server principal %s does not match the configured %s (check dfs.namenode.kerberos.principal / yarn.resourcemanager.principal)", e.Offered, e.Configured)
}
