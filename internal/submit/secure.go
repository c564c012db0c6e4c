package submit

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"

	"google.golang.org/protobuf/proto"

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
	// keytab is the sealed keytab in the staging directory, a
	// LocalResource of the AM's (--keytab only).
	keytab *hdfs.Resource
}

// maxKeytabBytes bounds the keytab a job carries in the AM's credentials
// (real ones hold a few keys: well under a kilobyte per principal).
const maxKeytabBytes = 256 << 10

// secure gets the delegation tokens of the default filesystem and of
// job.FileSystems and, with --keytab, seals the keytab (sealKeytab).
// Without a Kerberos login there is nothing to do.
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
		if err := s.sealKeytab(ctx, creds, &parts); err != nil {
			return secureParts{}, err
		}
	}
	parts.tokens = creds.Marshal()
	return parts, nil
}

// sealKeytab seals the --keytab file for the AM with a fresh key: the
// sealed bytes go to the staging directory (0600, the directory 0700) and
// from there, a LocalResource, to the AM's working directory; the key goes
// into the AM's credentials. So the submission, the ResourceManager's state
// store and the NodeManager's recovery database hold the key only, and the
// staging directory and the AM's node the sealed bytes only; both go when
// the job ends.
func (s *Submission) sealKeytab(ctx context.Context, creds *security.Credentials, parts *secureParts) error {
	key, sealed, err := sealedKeytab(s.opts.Keytab, s.AppID)
	if err != nil {
		return err
	}
	r, err := s.FS.UploadPrivateBytes(ctx, sealed, path.Join(s.StagingDir, contract.SealedKeytabName))
	if err != nil {
		return err
	}
	creds.AddSecret(contract.KeytabSecret, key)
	parts.keytab = &r
	parts.job.KeytabSecret = contract.KeytabSecret
	parts.job.Krb5Conf = clientKrb5Conf()
	return nil
}

// sealedKeytab is the keytab file p sealed for appID's AM, and the key.
func sealedKeytab(p, appID string) (key, sealed []byte, err error) {
	kt, err := readKeytab(p)
	if err != nil {
		return nil, nil, err
	}
	if key, err = security.NewKeytabKey(); err != nil {
		return nil, nil, err
	}
	sealed, err = security.SealKeytab(key, kt, appID)
	return key, sealed, err
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

// apply puts the credentials (tokens, and the keytab's key) and the sealed
// keytab into the AM's launch context.
func (p secureParts) apply(clc *hadoopyarn.ContainerLaunchContextProto) {
	if p.job == nil {
		return
	}
	clc.Tokens = p.tokens
	if p.keytab != nil {
		clc.LocalResources = append(clc.LocalResources, &hadoopyarn.StringLocalResourceMapProto{
			Key: proto.String(contract.SealedKeytabName), Value: p.keytab.Proto()})
	}
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
