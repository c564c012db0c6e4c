package ipc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tfyarn/tfyarn/internal/security"
)

// MechDigestMD5 is the SASL mechanism behind Hadoop's TOKEN auth method.
const MechDigestMD5 = "DIGEST-MD5"

// DigestMD5 is the TOKEN/DIGEST-MD5 mechanism (RFC 2831, client side) as
// Hadoop's SaslRpcClient uses it: the token identifier and password, base64
// encoded, are the username and password. YARN's AM↔RM and AM↔NM services
// accept nothing else, even on clusters without Kerberos.
//
// The zero value of every field but Tokens (or Select) is usable.
type DigestMD5 struct {
	// Tokens are the candidates; see Kind and Services for how one is picked.
	Tokens []security.Token
	// Kind restricts the candidates to one token kind (e.g.
	// security.KindAMRMToken); empty accepts any kind.
	Kind string
	// Services are the names the server may go by in a token's service field
	// (its host:port, its IP:port). The SASL offer does not say which address
	// was dialed, so the caller states it here. A candidate whose service
	// matches wins; otherwise a single candidate is used as is, because the RM
	// writes the AMRMToken's service as whatever it resolved its own address
	// to, which rarely equals the address in the client's configuration.
	Services []string
	// Select, when set, replaces the Tokens/Kind/Services choice. Returning
	// an error wrapping ErrNoCredentials lets the next offer be tried.
	Select func(SaslOffer) (security.Token, error)

	// Protection lists the acceptable protection levels, in Hadoop's names
	// (hadoop.rpc.protection: "authentication", "integrity", "privacy") or
	// as SASL QOPs ("auth", "auth-int", "auth-conf"). The strongest level
	// both sides accept is used. Empty accepts whatever the server offers,
	// strongest first.
	Protection []string
	// Ciphers is the preference order for auth-conf among "rc4", "3des",
	// "des", "rc4-56" and "rc4-40". Empty means rc4, then 3des: the weak
	// ones are only used when named here.
	Ciphers []string
	// MaxBuf is the receive buffer size announced to the server; 0 means
	// 65536, Java's default.
	MaxBuf int

	// OnComplete, when set, learns the negotiated QOP and cipher (empty
	// unless auth-conf) once the server is verified; for logs and tests.
	OnComplete func(qop, cipher string)

	cnonce func() (string, error) // tests pin the client nonce (RFC 2831 vectors)
}

// TokenAuth is a DigestMD5 mechanism over the given tokens, accepting any
// protection level the server asks for.
func TokenAuth(tokens ...security.Token) *DigestMD5 {
	return &DigestMD5{Tokens: tokens}
}

// Method implements SaslMechanism.
func (d *DigestMD5) Method() string { return MethodToken }

// Mechanism implements SaslMechanism.
func (d *DigestMD5) Mechanism() string { return MechDigestMD5 }

// Start implements SaslMechanism: it picks the token and validates the
// configuration; the exchange itself happens in Step.
func (d *DigestMD5) Start(_ context.Context, offer SaslOffer) (SaslSession, error) {
	tok, err := d.selectToken(offer)
	if err != nil {
		return nil, err
	}
	qops, err := qopPreference(d.Protection)
	if err != nil {
		return nil, err
	}
	ciphers, err := cipherPreference(d.Ciphers)
	if err != nil {
		return nil, err
	}
	maxBuf := d.MaxBuf
	if maxBuf <= 0 {
		maxBuf = defaultMaxBuf
	}
	cnonce := d.cnonce
	if cnonce == nil {
		cnonce = randomCnonce
	}
	return &digestSession{
		username:   base64Std(tok.Identifier),
		password:   base64Std(tok.Password),
		digestURI:  offer.Protocol + "/" + offer.ServerID,
		qops:       qops,
		ciphers:    ciphers,
		recvMaxBuf: maxBuf,
		cnonceFn:   cnonce,
		onComplete: d.OnComplete,
	}, nil
}

// selectToken follows Hadoop's SaslRpcClient loosely: kind first, then
// service, then the only candidate left.
func (d *DigestMD5) selectToken(offer SaslOffer) (security.Token, error) {
	if d.Select != nil {
		return d.Select(offer)
	}
	var cands []security.Token
	for _, t := range d.Tokens {
		if d.Kind == "" || t.Kind == d.Kind {
			cands = append(cands, t)
		}
	}
	switch len(cands) {
	case 0:
		if d.Kind != "" {
			return security.Token{}, fmt.Errorf("%w: no %s token", ErrNoCredentials, d.Kind)
		}
		return security.Token{}, fmt.Errorf("%w: no tokens", ErrNoCredentials)
	case 1:
		return cands[0], nil
	}
	for _, t := range cands {
		if slices.Contains(d.Services, t.Service) {
			return t, nil
		}
	}
	services := make([]string, len(cands))
	for i, t := range cands {
		services[i] = t.Service
	}
	return security.Token{}, fmt.Errorf("ipc: digest-md5: %d candidate tokens (services %s), none for %s",
		len(cands), strings.Join(services, ", "), strings.Join(d.Services, ", "))
}

// SASL QOP names and their Hadoop protection-level aliases.
const (
	qopAuth     = "auth"
	qopAuthInt  = "auth-int"
	qopAuthConf = "auth-conf"
)

var qopStrength = map[string]int{qopAuth: 0, qopAuthInt: 1, qopAuthConf: 2}

// qopPreference turns the configured levels into QOPs, strongest first.
func qopPreference(levels []string) ([]string, error) {
	if len(levels) == 0 {
		return []string{qopAuthConf, qopAuthInt, qopAuth}, nil
	}
	var out []string
	for _, l := range levels {
		var q string
		switch strings.ToLower(strings.TrimSpace(l)) {
		case "authentication", qopAuth:
			q = qopAuth
		case "integrity", qopAuthInt:
			q = qopAuthInt
		case "privacy", qopAuthConf:
			q = qopAuthConf
		default:
			return nil, fmt.Errorf("ipc: digest-md5: unknown protection level %q", l)
		}
		if !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return qopStrength[b] - qopStrength[a] })
	return out, nil
}

// defaultCiphers leaves out des and the export-grade rc4 variants on purpose.
var defaultCiphers = []string{"rc4", "3des"}

func cipherPreference(names []string) ([]string, error) {
	if len(names) == 0 {
		return defaultCiphers, nil
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if _, ok := cipherKeyLen[n]; !ok {
			return nil, fmt.Errorf("ipc: digest-md5: unsupported cipher %q", n)
		}
		out = append(out, n)
	}
	return out, nil
}

var errDigest = errors.New("digest-md5")
