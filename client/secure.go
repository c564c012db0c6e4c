package client

import (
	"context"
	"os"
	"path"

	"google.golang.org/protobuf/proto"

	"github.com/tfyarn/tfyarn/contract"
	"github.com/tfyarn/tfyarn/hdfs"
	"github.com/tfyarn/tfyarn/security"
	"github.com/tfyarn/tfyarn/yarnpb/hadoopyarn"
)

// secureParts is what a Kerberized submission adds to the AM's container:
// the HDFS delegation tokens (renewable by the ResourceManager, which renews
// them while the application runs) and, with --keytab, the keytab as a
// private resource.
type secureParts struct {
	job    *contract.JobKerberos
	tokens []byte
	keytab *hdfs.Resource
}

// secure gets the delegation tokens of the default filesystem and of
// job.FileSystems and uploads the keytab into the staging directory (never
// into the shared cache). Without a Kerberos login there is nothing to do.
func (s *Submission) secure(ctx context.Context) (secureParts, error) {
	if s.login == nil {
		return secureParts{}, nil
	}
	conf := s.job.Conf
	renewer, err := conf.RMPrincipalFor(s.rm.Addrs()[0])
	if err != nil {
		return secureParts{}, err
	}
	tok, err := s.fs.DelegationToken(ctx, renewer)
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
			FileSystems: append([]string{s.fs.Target().URI}, s.job.FileSystems...),
		},
		tokens: creds.Marshal(),
	}
	if s.job.Keytab != "" {
		res, err := s.fs.UploadPrivate(ctx, s.job.Keytab, path.Join(s.StagingDir, contract.KeytabName))
		if err != nil {
			return secureParts{}, err
		}
		parts.keytab = &res
		parts.job.Keytab = contract.KeytabName
		parts.job.Krb5Conf = clientKrb5Conf()
	}
	return parts, nil
}

// apply puts the tokens and the keytab into the AM's launch context.
func (p secureParts) apply(clc *hadoopyarn.ContainerLaunchContextProto) {
	if p.job == nil {
		return
	}
	clc.Tokens = p.tokens
	if p.keytab != nil {
		clc.LocalResources = append(clc.LocalResources, &hadoopyarn.StringLocalResourceMapProto{
			Key: proto.String(contract.KeytabName), Value: p.keytab.Proto(),
		})
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
