package rendezvous

import (
	"crypto/rand"
	"fmt"

	"github.com/tfyarn/tfyarn/internal/reqsign"
	"github.com/tfyarn/tfyarn/internal/security"
)

// SecretAlias is the alias under which the rendezvous secret travels in the
// containers' Hadoop credentials (a secret key, beside the tokens).
const SecretAlias = "tfyarn.rendezvous.secret"

// SecretSize is the length of the secrets NewSecret makes.
const SecretSize = 32

// minSecretSize refuses secrets too short to resist guessing.
const minSecretSize = reqsign.MinKeySize

// NewSecret returns SecretSize random bytes from the OS's CSPRNG.
func NewSecret() ([]byte, error) {
	b := make([]byte, SecretSize)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("rendezvous: generating secret: %w", err)
	}
	return b, nil
}

// AddSecret stores secret in creds under SecretAlias, for the AM to pass on
// to its task containers.
func AddSecret(creds *security.Credentials, secret []byte) {
	creds.AddSecret(SecretAlias, secret)
}

// SecretFrom returns the rendezvous secret stored in creds.
func SecretFrom(creds *security.Credentials) ([]byte, error) {
	s, ok := creds.Secret(SecretAlias)
	if !ok {
		return nil, fmt.Errorf("rendezvous: credentials carry no secret %q", SecretAlias)
	}
	if err := checkSecret(s); err != nil {
		return nil, err
	}
	return s, nil
}

func checkSecret(s []byte) error {
	if len(s) < minSecretSize {
		return fmt.Errorf("rendezvous: secret is %d bytes, want at least %d", len(s), minSecretSize)
	}
	return nil
}
