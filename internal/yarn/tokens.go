package yarn

import (
	"errors"
	"fmt"
	"os"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopcommon"
	"google.golang.org/protobuf/proto"
)

// LoadContainerCredentials reads the credentials of the current container
// from $HADOOP_TOKEN_FILE_LOCATION.
func LoadContainerCredentials() (*security.Credentials, error) {
	path := os.Getenv(contract.EnvTokenFile)
	if path == "" {
		return nil, fmt.Errorf("yarn: %s is not set: not running in a YARN container", contract.EnvTokenFile)
	}
	creds, err := security.ReadCredentialsFile(path)
	if err != nil {
		return nil, fmt.Errorf("yarn: reading %s: %w", contract.EnvTokenFile, err)
	}
	return creds, nil
}

// AMRMToken returns the one AMRMToken of creds. The RM puts exactly one in
// an AM's credentials; several would be ambiguous, since its service names
// the scheduler only loosely.
func AMRMToken(creds *security.Credentials) (security.Token, error) {
	if creds == nil {
		return security.Token{}, errors.New("yarn: no credentials")
	}
	toks := creds.TokensOfKind(security.KindAMRMToken)
	switch len(toks) {
	case 0:
		return security.Token{}, fmt.Errorf("yarn: credentials hold no %s token", security.KindAMRMToken)
	case 1:
		return toks[0].Token, nil
	}
	return security.Token{}, fmt.Errorf("yarn: credentials hold %d %s tokens, want one", len(toks), security.KindAMRMToken)
}

// ContainerTokens encodes the credentials a task container gets
// (ContainerLaunchContextProto.tokens, Writable format): creds without the
// AMRMToken, which would let a task impersonate the AM towards the RM.
func ContainerTokens(creds *security.Credentials) []byte {
	if creds == nil {
		creds = security.NewCredentials()
	}
	return creds.Without(security.KindAMRMToken).Marshal()
}

// TokenFromProto converts a wire token (AMRMToken, NMToken, container
// token) to security.Token.
func TokenFromProto(p *hadoopcommon.TokenProto) security.Token {
	return security.Token{
		Identifier: append([]byte(nil), p.GetIdentifier()...),
		Password:   append([]byte(nil), p.GetPassword()...),
		Kind:       p.GetKind(),
		Service:    p.GetService(),
	}
}

// TokenToProto is the inverse of TokenFromProto.
func TokenToProto(t security.Token) *hadoopcommon.TokenProto {
	return &hadoopcommon.TokenProto{
		Identifier: append([]byte(nil), t.Identifier...),
		Password:   append([]byte(nil), t.Password...),
		Kind:       proto.String(t.Kind),
		Service:    proto.String(t.Service),
	}
}
