package security

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	krbclient "github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/iana/errorcode"
	"github.com/jcmturner/gokrb5/v8/iana/nametype"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/types"

	"github.com/tfyarn/tfyarn/internal/authtolocal"
)

// Environment variables MIT Kerberos (and Hadoop's JDK clients) read.
const (
	EnvKrb5Config = "KRB5_CONFIG"
	EnvKrb5CCName = "KRB5CCNAME"
)

// DefaultKrb5Config is where krb5.conf is when KRB5_CONFIG is unset.
const DefaultKrb5Config = "/etc/krb5.conf"

// DefaultKDCTimeout bounds one login (the AS exchange with the KDC).
const DefaultKDCTimeout = 15 * time.Second

// KerberosOptions say where a Kerberos identity comes from: a keytab (with
// Principal) or, without one, the user's ticket cache (what kinit wrote).
type KerberosOptions struct {
	// Principal is the identity to log in as from Keytab: "alice@REALM",
	// or "alice" for the default realm of krb5.conf.
	Principal string
	// Keytab, when set, logs in with the KDC using the principal's key.
	Keytab string
	// KeytabData, when set, is a keytab's content held in memory (the AM
	// gets it inside its container's credentials, never as a file);
	// KeytabSource names it in messages. It takes the place of Keytab.
	KeytabData   []byte
	KeytabSource string
	// CCache is the ticket cache name (FILE:path, a path, KEYRING:...);
	// empty means KRB5CCNAME, else krb5.conf's default_ccache_name, else
	// /tmp/krb5cc_<uid> (MIT's order). FILE and KEYRING caches can be read.
	CCache string
	// Krb5Conf is krb5.conf's path; empty means KRB5_CONFIG, else
	// /etc/krb5.conf.
	Krb5Conf string
	// Timeout bounds the exchange with the KDC (DefaultKDCTimeout).
	Timeout time.Duration
	// AuthToLocal maps the principal to its user name (the cluster's
	// hadoop.security.auth_to_local); nil means DEFAULT.
	AuthToLocal *authtolocal.Rules

	Getenv func(string) string // tests; os.Getenv
	Now    func() time.Time    // tests; time.Now
}

// KerberosLogin is a logged-in Kerberos identity.
type KerberosLogin struct {
	// Client gets service tickets (for SASL GSSAPI). It holds secrets:
	// never print it.
	Client *krbclient.Client
	// Principal is the full name, "alice@EXAMPLE.COM" (what Hadoop's RPC
	// servers see as the user).
	Principal string
	// Source says where the credentials came from, for messages:
	// "ticket cache /tmp/krb5cc_0", "ticket cache KEYRING:session:a:a"
	// or "keytab /path/alice.keytab".
	Source string
	// Expires is when a ticket cache's ticket-granting ticket ends; zero
	// for a keytab login, which can always log in again.
	Expires time.Time
	// User is the user name the cluster's auth_to_local rules map
	// Principal to ("alice" of "alice@EXAMPLE.COM" under DEFAULT): what
	// Hadoop's servers call this user (HDFS owner, /user/<User>, job user).
	User string
}

// mapUser sets l.User as rules (nil: DEFAULT) map l.Principal, with
// krb5.conf's default realm for DEFAULT.
func (l *KerberosLogin) mapUser(rules *authtolocal.Rules, defaultRealm string) error {
	if rules == nil {
		rules = authtolocal.Default(authtolocal.MechanismHadoop)
		rules.Source = authtolocal.KeyRules + " is unset: DEFAULT"
	}
	user, err := rules.Map(l.Principal, defaultRealm)
	if err != nil {
		hint := "add a rule for it to " + authtolocal.KeyRules + " in the cluster's core-site.xml, or log in as a principal the rules map"
		if defaultRealm == "" {
			hint += " (krb5.conf has no default_realm, so DEFAULT maps no principal)"
		}
		return &KerberosError{Op: err.Error(), Hint: hint}
	}
	if user == "" {
		return &KerberosError{Op: fmt.Sprintf("the auth_to_local rules (%s) map the principal %s to an empty user name", rules.Source, l.Principal), Hint: "fix " + authtolocal.KeyRules + " in the cluster's core-site.xml"}
	}
	l.User = user
	return nil
}

// KerberosError is a Kerberos login that did not work: Op says which step,
// Hint what the user can do about it.
type KerberosError struct {
	Op   string // e.g. "no Kerberos ticket for alice@EXAMPLE.COM"
	Hint string // e.g. "run kinit or pass --keytab"
	Err  error  // the cause, if any
}

func (e *KerberosError) Error() string {
	msg := e.Op
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

func (e *KerberosError) Unwrap() error { return e.Err }

// LoginKerberos logs in as opts say. A keytab login talks to the KDC (bounded
// by ctx and opts.Timeout); a ticket-cache login only reads the cache and
// checks that its ticket-granting ticket has not expired.
func LoginKerberos(ctx context.Context, opts KerberosOptions) (*KerberosLogin, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultKDCTimeout
	}
	cfg, krb5Conf, err := loadKrb5Conf(opts)
	if err != nil {
		return nil, err
	}
	var login *KerberosLogin
	if opts.Keytab != "" || opts.KeytabData != nil {
		login, err = loginKeytab(ctx, opts, cfg)
	} else {
		login, err = loginCCache(opts, cfg, krb5Conf)
	}
	if err != nil {
		return nil, err
	}
	if err := login.mapUser(opts.AuthToLocal, cfg.LibDefaults.DefaultRealm); err != nil {
		return nil, err
	}
	return login, nil
}

func loadKrb5Conf(opts KerberosOptions) (*krbconfig.Config, string, error) {
	path := opts.Krb5Conf
	from := "--krb5-conf"
	if path == "" {
		path, from = opts.Getenv(EnvKrb5Config), EnvKrb5Config
	}
	if path == "" {
		path, from = DefaultKrb5Config, "the default location"
	}
	if _, err := os.Stat(path); err != nil {
		return nil, "", &KerberosError{
			Op:   fmt.Sprintf("no Kerberos configuration at %s (from %s)", path, from),
			Hint: "install your cluster's krb5.conf there or point " + EnvKrb5Config + " at it",
		}
	}
	cfg, err := safeCall(func() (*krbconfig.Config, error) { return krbconfig.Load(path) })
	if err != nil {
		return nil, "", &KerberosError{Op: "reading the Kerberos configuration " + path, Err: err, Hint: "fix the file or point " + EnvKrb5Config + " at a valid one"}
	}
	return cfg, path, nil
}

// ccacheSource says where a ticket cache comes from (for messages) and
// reads its bytes in MIT's FILE format, version 1 to 4.
type ccacheSource struct {
	Name string // "/tmp/krb5cc_0", "KEYRING:persistent:0:krb_ccache_x"
	Read func() ([]byte, error)
}

// openCCache resolves the ticket cache (resolveCCacheName) and, for the
// types tfyarn reads (FILE and KEYRING), says how to read it. A cache that
// does not exist is a no-ticket error naming it.
func openCCache(opts KerberosOptions, krb5Conf, who string) (ccacheSource, error) {
	name, err := resolveCCacheName(opts, krb5Conf)
	if err != nil {
		return ccacheSource{}, err
	}
	switch name.Type {
	case "FILE":
		path := name.Residual
		if _, err := os.Stat(path); err != nil {
			return ccacheSource{}, &KerberosError{
				Op:   fmt.Sprintf("no Kerberos ticket for %s (no ticket cache at %s)", who, path),
				Hint: "run kinit or pass --keytab",
			}
		}
		return ccacheSource{Name: path, Read: func() ([]byte, error) { return os.ReadFile(path) }}, nil
	case "KEYRING":
		c, full, err := readKeyringCCache(name.Residual)
		switch {
		case errors.Is(err, errNoKeyringCache):
			return ccacheSource{}, &KerberosError{
				Op:   fmt.Sprintf("no Kerberos ticket for %s (no ticket cache %s%s)", who, full, keyringScopeNote(full)),
				Hint: "run kinit or pass --keytab",
			}
		case errors.Is(err, errKeyringExpired):
			return ccacheSource{}, &KerberosError{
				Op:   fmt.Sprintf("the Kerberos ticket cache %s has expired (the kernel removes a cache keyring when its tickets end)", full),
				Hint: "run kinit again or pass --keytab",
			}
		case errors.Is(err, errBadKeyringName):
			return ccacheSource{}, &KerberosError{
				Op:   fmt.Sprintf("the ticket cache name %s (from %s): %v", name, name.From, err),
				Hint: "set " + EnvKrb5CCName + " to the cache kinit writes, e.g. KEYRING:persistent:$(id -u)",
			}
		case err != nil:
			return ccacheSource{}, &KerberosError{Op: "reading the ticket cache " + full.String(), Err: err, Hint: "run kinit again or pass --keytab"}
		}
		return ccacheSource{Name: full.String(), Read: c.fileFormat}, nil
	}
	from := ""
	if name.From != EnvKrb5CCName && name.From != "KerberosOptions.CCache" {
		from = " (from " + name.From + ")"
	}
	return ccacheSource{}, &KerberosError{
		Op:   fmt.Sprintf("the ticket cache %s%s is of type %s, which tfyarn cannot read", name, from, name.Type),
		Hint: "use a file or kernel keyring cache (export " + EnvKrb5CCName + "=FILE:/tmp/krb5cc_$(id -u) and run kinit again) or pass --keytab",
	}
}

// keyringScopeNote explains why a process or thread keyring cache is never
// there for tfyarn: those keyrings belong to the process (thread) that ran
// kinit and end with it.
func keyringScopeNote(name keyringResidual) string {
	switch name.Anchor {
	case "process", "thread":
		return fmt.Sprintf(": a %s keyring belongs to the %s that ran kinit, so no other program sees it; use KEYRING:session: or KEYRING:persistent:", name.Anchor, name.Anchor)
	}
	return ""
}

func loginCCache(opts KerberosOptions, cfg *krbconfig.Config, krb5Conf string) (*KerberosLogin, error) {
	who := "the current user"
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	if opts.Principal != "" {
		who = opts.Principal
	}
	src, err := openCCache(opts, krb5Conf, who)
	if err != nil {
		return nil, err
	}
	path := src.Name
	cc, err := safeCall(func() (*credentials.CCache, error) {
		b, err := src.Read()
		if err != nil {
			return nil, err
		}
		if err := checkCCacheCounts(b); err != nil {
			return nil, err
		}
		cc := new(credentials.CCache)
		return cc, cc.Unmarshal(b)
	})
	if err != nil {
		return nil, &KerberosError{Op: "reading the ticket cache " + path, Err: err, Hint: "run kinit again or pass --keytab"}
	}
	principal := cc.DefaultPrincipal.PrincipalName.PrincipalNameString() + "@" + cc.DefaultPrincipal.Realm
	if opts.Principal != "" && !samePrincipal(opts.Principal, principal, cfg) {
		return nil, &KerberosError{
			Op:   fmt.Sprintf("the ticket cache %s holds a ticket for %s, not for %s", path, principal, opts.Principal),
			Hint: "run kinit " + opts.Principal + " or pass --keytab",
		}
	}
	tgtName := types.PrincipalName{NameType: nametype.KRB_NT_SRV_INST, NameString: []string{"krbtgt", cc.DefaultPrincipal.Realm}}
	tgt, ok := cc.GetEntry(tgtName)
	if !ok {
		return nil, &KerberosError{
			Op:   fmt.Sprintf("no Kerberos ticket for %s (the ticket cache %s has no ticket-granting ticket)", principal, path),
			Hint: "run kinit or pass --keytab",
		}
	}
	if now := opts.Now(); !tgt.EndTime.After(now) {
		return nil, &KerberosError{
			Op:   fmt.Sprintf("the Kerberos ticket for %s expired at %s (ticket cache %s)", principal, tgt.EndTime.Local().Format(time.DateTime), path),
			Hint: "run kinit again or pass --keytab",
		}
	}
	cl, err := krbclient.NewFromCCache(cc, cfg, krbclient.DisablePAFXFAST(true))
	if err != nil {
		return nil, &KerberosError{Op: "using the ticket cache " + path, Err: err, Hint: "run kinit again or pass --keytab"}
	}
	return &KerberosLogin{Client: cl, Principal: principal, Source: "ticket cache " + path, Expires: tgt.EndTime}, nil
}

func loginKeytab(ctx context.Context, opts KerberosOptions, cfg *krbconfig.Config) (*KerberosLogin, error) {
	if opts.Principal == "" {
		return nil, &KerberosError{Op: "--keytab needs --principal", Hint: "pass --principal user@REALM"}
	}
	name, realm := splitPrincipal(opts.Principal, cfg)
	if realm == "" {
		return nil, &KerberosError{
			Op:   fmt.Sprintf("principal %s names no realm and krb5.conf has no default_realm", opts.Principal),
			Hint: "pass the full principal, e.g. " + name + "@EXAMPLE.COM",
		}
	}
	principal := name + "@" + realm
	source := opts.Keytab
	var kt *keytab.Keytab
	var err error
	if opts.KeytabData != nil {
		source = cmp.Or(opts.KeytabSource, "in memory")
		kt, err = safeCall(func() (*keytab.Keytab, error) {
			k := keytab.New()
			return k, k.Unmarshal(opts.KeytabData)
		})
		if err != nil {
			return nil, &KerberosError{Op: "reading keytab " + source, Err: err, Hint: "is it a keytab (ktutil, kadmin xst)?"}
		}
	} else {
		st, err := os.Stat(opts.Keytab)
		if err != nil {
			return nil, &KerberosError{Op: "keytab " + opts.Keytab, Err: errors.Unwrap(err), Hint: "pass the path of the keytab holding " + principal}
		}
		if !st.Mode().IsRegular() {
			return nil, &KerberosError{Op: "keytab " + opts.Keytab + " is not a regular file"}
		}
		kt, err = safeCall(func() (*keytab.Keytab, error) { return keytab.Load(opts.Keytab) })
		if err != nil {
			return nil, &KerberosError{Op: "reading keytab " + opts.Keytab, Err: err, Hint: "is it a keytab (ktutil, kadmin xst)?"}
		}
	}
	if !keytabHas(kt, name, realm) {
		return nil, &KerberosError{
			Op:   fmt.Sprintf("keytab %s has no key for %s", source, principal),
			Hint: "check the principal (klist -kt " + source + ")",
		}
	}
	cl := krbclient.NewWithKeytab(name, realm, kt, cfg, krbclient.DisablePAFXFAST(true))
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cl.Login() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		return nil, &KerberosError{
			Op:   fmt.Sprintf("the KDC for realm %s (%s) did not answer within %s", realm, kdcList(cfg, realm), opts.Timeout),
			Hint: "check that the KDC is up and krb5.conf names it",
		}
	}
	if err != nil {
		return nil, classifyKDCError(principal, realm, cfg, err)
	}
	return &KerberosLogin{Client: cl, Principal: principal, Source: "keytab " + source}, nil
}

// classifyKDCError turns the KDC's answer (or its silence) into one line.
func classifyKDCError(principal, realm string, cfg *krbconfig.Config, err error) error {
	if code, ok := KRBErrorCode(err); ok {
		switch code {
		case errorcode.KDC_ERR_C_PRINCIPAL_UNKNOWN:
			return &KerberosError{Op: fmt.Sprintf("the KDC of realm %s does not know %s", realm, principal), Hint: "check --principal"}
		case errorcode.KDC_ERR_PREAUTH_FAILED, errorcode.KRB_AP_ERR_BAD_INTEGRITY:
			return &KerberosError{Op: fmt.Sprintf("the KDC refused the keytab's key for %s (outdated keytab?)", principal), Hint: "get a current keytab from your Kerberos admin"}
		case errorcode.KRB_AP_ERR_SKEW:
			return &KerberosError{Op: "this machine's clock differs too much from the KDC's (Kerberos clock skew)", Hint: "synchronise the clock (NTP) and try again"}
		case errorcode.KDC_ERR_KEY_EXPIRED:
			return &KerberosError{Op: fmt.Sprintf("the password of %s has expired", principal), Hint: "change it, then get a new keytab"}
		}
		return &KerberosError{Op: "Kerberos login as " + principal, Err: err}
	}
	text := err.Error()
	switch {
	case strings.Contains(text, "Decryption integrity check failed"):
		return &KerberosError{Op: fmt.Sprintf("the KDC refused the keytab's key for %s (outdated keytab?)", principal), Hint: "get a current keytab from your Kerberos admin"}
	case strings.Contains(text, "error sending to a KDC"), strings.Contains(text, "error resolving KDC"),
		strings.Contains(text, "no KDCs defined"), strings.Contains(text, "connection refused"):
		return &KerberosError{
			Op:   fmt.Sprintf("cannot reach the KDC for realm %s (%s)", realm, kdcList(cfg, realm)),
			Hint: "check that the KDC is up and that krb5.conf names it",
		}
	}
	return &KerberosError{Op: "Kerberos login as " + principal, Err: err}
}

func kdcList(cfg *krbconfig.Config, realm string) string {
	for _, r := range cfg.Realms {
		if strings.EqualFold(r.Realm, realm) && len(r.KDC) > 0 {
			return "kdc " + strings.Join(r.KDC, ", ")
		}
	}
	return "no kdc in krb5.conf"
}

func splitPrincipal(p string, cfg *krbconfig.Config) (name, realm string) {
	name, realm, ok := strings.Cut(p, "@")
	if !ok {
		realm = cfg.LibDefaults.DefaultRealm
	}
	return name, realm
}

func samePrincipal(want, have string, cfg *krbconfig.Config) bool {
	n, r := splitPrincipal(want, cfg)
	return n+"@"+r == have
}

func keytabHas(kt *keytab.Keytab, name, realm string) bool {
	for _, e := range kt.Entries {
		if e.Principal.Realm == realm && strings.Join(e.Principal.Components, "/") == name {
			return true
		}
	}
	return false
}

// safeCall runs a gokrb5 parser, whose readers index without bounds
// checks, so that a corrupt file is an error and not a crash.
func safeCall[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed file (%v)", r)
		}
	}()
	return f()
}
