package appmaster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hadoopconf"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/pause"
	"github.com/tfyarn/tfyarn/internal/security"
)

// Bounds of the keytab-driven token refresh.
const (
	// TokenRefreshFraction of a fresh token's lifetime passes before the
	// next refresh (Spark uses the same 75%).
	TokenRefreshFraction = 0.75
	minTokenRefresh      = 5 * time.Second
	maxTokenRefresh      = 12 * time.Hour
	// tokenRetry is the pause after a failed refresh.
	tokenRetry = 10 * time.Second
)

// amSecurity is how the AM of a Kerberized job reaches HDFS and what its
// tasks get as credentials. On an insecure cluster it only passes the
// container's credentials on.
type amSecurity struct {
	jf    contract.JobFile
	conf  *hadoopconf.Config
	login *security.KerberosLogin // from the job's keytab; nil without one

	mu sync.Mutex
	// creds are the AM container's credentials, with the HDFS tokens
	// replaced by fresher ones once the keytab login has obtained some.
	creds *security.Credentials
}

// newAMSecurity opens the job's keytab, if it has one, into memory: it
// takes the key out of the AM's credentials (creds, read from the
// container's token file), so no task's credentials ever hold it
// (TaskTokens; the token file is rewritten without it before), and reads
// the sealed keytab in the working directory (dir) once, deleting that
// copy, which the job's own tasks on this node could read.
func newAMSecurity(ctx context.Context, jf contract.JobFile, creds *security.Credentials, dir string, getenv func(string) string) (*amSecurity, error) {
	s := &amSecurity{jf: jf, conf: jf.Config(), creds: creds}
	k := jf.Kerberos
	if k == nil || k.KeytabSecret == "" {
		return s, nil
	}
	key, ok := creds.Secret(k.KeytabSecret)
	if !ok {
		return nil, fmt.Errorf("appmaster: the job was submitted with a keytab, but the AM's credentials hold no secret %q", k.KeytabSecret)
	}
	creds.RemoveSecret(k.KeytabSecret)
	kt, err := takeSealedKeytab(dir, key, jf.AppID)
	if err != nil {
		return nil, err
	}
	rules, err := s.conf.AuthToLocal()
	if err != nil {
		return nil, err
	}
	login, err := security.LoginKerberos(ctx, security.KerberosOptions{
		AuthToLocal:  rules,
		Principal:    k.Principal,
		KeytabData:   kt,
		KeytabSource: "sealed in the staging directory",
		Krb5Conf:     krb5ConfForAM(jf, getenv),
		Getenv:       getenv,
	})
	if err != nil {
		return nil, err
	}
	s.login = login
	return s, nil
}

// takeSealedKeytab reads the sealed keytab in dir (bounded), removes it
// (the NodeManager's localized file and the link to it), and opens it with
// key.
func takeSealedKeytab(dir string, key []byte, appID string) ([]byte, error) {
	p := filepath.Join(dir, contract.SealedKeytabName)
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("appmaster: the job was submitted with a keytab: %w", err)
	}
	sealed, err := io.ReadAll(io.LimitReader(f, security.MaxSealedKeytabBytes+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("appmaster: read %s: %w", p, err)
	}
	if target, err := filepath.EvalSymlinks(p); err == nil && target != p {
		_ = os.Remove(target)
	}
	_ = os.Remove(p)
	return security.OpenSealedKeytab(key, sealed, appID)
}

// krb5ConfForAM prefers the node's own Kerberos configuration (KRB5_CONFIG,
// /etc/krb5.conf) and falls back to the copy the client shipped.
func krb5ConfForAM(jf contract.JobFile, getenv func(string) string) string {
	if p := getenv(security.EnvKrb5Config); p != "" {
		return p
	}
	if _, err := os.Stat(security.DefaultKrb5Config); err == nil || jf.Kerberos.Krb5Conf == "" {
		return security.DefaultKrb5Config
	}
	p, err := filepath.Abs("krb5.conf")
	if err != nil {
		return security.DefaultKrb5Config
	}
	if err := os.WriteFile(p, []byte(jf.Kerberos.Krb5Conf), 0o644); err != nil {
		return security.DefaultKrb5Config
	}
	return p
}

// hdfsOptions connect as the keytab's principal, else with the HDFS
// delegation tokens the client obtained.
func (s *amSecurity) hdfsOptions() hdfs.Options {
	opts := hdfs.Options{User: s.jf.User}
	if s.login != nil {
		opts.Kerberos = s.login
		return opts
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.creds.TokensOfKind(security.KindHDFSDelegation) {
		opts.Tokens = append(opts.Tokens, t.Token)
	}
	return opts
}

// taskTokens are the credentials for a task container being launched now.
func (s *amSecurity) taskTokens(key []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return TaskTokens(s.creds, key)
}

// refreshTokens keeps the job's HDFS access alive past the delegation
// tokens' maximum lifetime: from the keytab it obtains fresh tokens for
// every filesystem of the job (renewable by the AM itself), hands them to
// the running tasks and to tasks launched later, and does it again when 75%
// of their lifetime has passed, until ctx ends. Each time it also renews the
// tokens it handed out before, until their maximum lifetime: a task's
// process reads its token file once, when it starts (Hadoop's clients do),
// and keeps using what it read. Without a keytab it returns at once: the
// ResourceManager renews the client's tokens up to their maximum lifetime.
func (s *amSecurity) refreshTokens(ctx context.Context, publish func(*security.Credentials), logf func(string, ...any)) {
	if s.login == nil {
		return
	}
	var handed []security.Token // handed out to the tasks by an earlier round
	for {
		wait := tokenRetry
		if len(handed) > 0 {
			var errs []error
			handed, errs = hdfs.RenewDelegationTokens(ctx, s.conf, s.login, s.jf.Kerberos.FileSystems, handed)
			if ctx.Err() != nil {
				return
			}
			for _, err := range errs {
				logf("no longer renewing an HDFS delegation token handed out before (a task's process that still holds it loses HDFS access when it expires): %v", err)
			}
		}
		toks, expires, err := hdfs.FetchDelegationTokens(ctx, s.conf, s.login, s.login.Principal, s.jf.Kerberos.FileSystems, true)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil:
			logf("refreshing the HDFS delegation tokens from the keytab: %v (again in %s)", err, wait)
		default:
			wait = refreshWait(time.Until(expires))
			creds := s.replaceTokens(toks)
			publish(creds)
			handed = append(handed, toks...)
			logf("obtained %d fresh HDFS delegation token(s) from the keytab of %s, valid until %s; next refresh in %s",
				len(toks), s.login.Principal, expires.Format(time.TimeOnly), wait.Round(time.Second))
		}
		if pause.For(ctx, wait) != nil {
			return
		}
	}
}

// refreshes says refreshTokens publishes fresh credentials: the job has
// a keytab.
func (s *amSecurity) refreshes() bool { return s != nil && s.login != nil }

// refreshWait is how long to use a token that stays valid for left.
func refreshWait(left time.Duration) time.Duration {
	w := time.Duration(float64(left) * TokenRefreshFraction)
	return min(max(w, minTokenRefresh), maxTokenRefresh)
}

func (s *amSecurity) replaceTokens(toks []security.Token) *security.Credentials {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.creds.Without() // a copy
	for _, t := range toks {
		next.AddToken(t.Service, t)
	}
	s.creds = next
	return next
}

// removeStaging deletes the application's staging directory.
func (s *amSecurity) removeStaging(ctx context.Context) error {
	fs, err := hdfs.ConnectOptions(ctx, s.conf, s.hdfsOptions())
	if err != nil {
		return err
	}
	defer fs.Close()
	return fs.RemoveStaging(ctx, s.jf.AppID)
}
