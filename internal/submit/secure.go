package submit

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/hdfs"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
)

// secureParts is what a Kerberized submission adds to the AM's container:
// the HDFS delegation tokens (renewable by the ResourceManager, which renews
// them while the application runs) and, with --keytab, the keytab as a
// secret key of the same credentials.
type secureParts struct {
	job    *contract.JobKerberos
	tokens []byte
}

// maxKeytabBytes bounds the keytab a job carries in the AM's credentials
// (real ones hold a few keys: well under a kilobyte per principal).
const maxKeytabBytes = 256 << 10

// secure gets the delegation tokens of the default filesystem and of
// job.FileSystems and, with --keytab, adds the keytab to the AM's
// credentials as a secret key: never a file in HDFS nor a LocalResource,
// which would leave it readable in the node's user cache and the AM's
// container directory by the job's own tasks. Without a Kerberos login
// there is nothing to do.
func (s *Submission) secure(ctx context.Context) (secureParts, error) {
	if s.login == nil {
		return secureParts{}, nil
	}
	conf := s.job.Conf
	renewer, err := conf.RMPrincipalFor(s.RM.Addrs()[0])
	if err != nil {
		return secureParts{}, err
	}
	tok, err := s.FS.DelegationToken(ctx, renewer)
	if err != nil {
		return secureParts{}, err
	}
	extra, _, err := hdfs.FetchDelegationTokens(ctx, conf, s.login, renewer, s.job.FileSystems, false)
	if err != nil {
		return secureParts{}, err
	}
	creds := security.NewCredentials()
	for _, t := range append([]security.Token{tok}, extra...) {
		// Hadoop's clients store a filesystem's token under its service.
		creds.AddToken(t.Service, t)
	}
	parts := secureParts{
		job: &contract.JobKerberos{
			Principal:   s.login.Principal,
			FileSystems: append([]string{s.FS.Target().URI}, s.job.FileSystems...),
		},
	}
	if s.opts.Keytab != "" {
		kt, err := readKeytab(s.opts.Keytab)
		if err != nil {
			return secureParts{}, err
		}
		creds.AddSecret(contract.KeytabSecret, kt)
		parts.job.KeytabSecret = contract.KeytabSecret
		parts.job.Krb5Conf = clientKrb5Conf()
	}
	parts.tokens = creds.Marshal()
	return parts, nil
}

// readKeytab reads the keytab the login already used, bounded.
func readKeytab(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("client: keytab: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeytabBytes+1))
	if err != nil {
		return nil, fmt.Errorf("client: keytab %s: %w", p, err)
	}
	if len(data) > maxKeytabBytes {
		return nil, fmt.Errorf("client: keytab %s is larger than %d KiB: export only the job's principal into it (ktutil, kadmin xst)", p, maxKeytabBytes>>10)
	}
	return data, nil
}

// apply puts the credentials (tokens, and the keytab) into the AM's launch
// context.
func (p secureParts) apply(clc *hadoopyarn.ContainerLaunchContextProto) {
	if p.job == nil {
		return
	}
	clc.Tokens = p.tokens
}

// clientKrb5Conf is this machine's krb5.conf, shipped for an AM whose node
// has none; "" when it cannot be read.
func clientKrb5Conf() string {
	p := os.Getenv(security.EnvKrb5Config)
	if p == "" {
		p = security.DefaultKrb5Config
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) > 1<<20 {
		return ""
	}
	return string(b)
}
