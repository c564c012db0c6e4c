package appmaster

import (
	"fmt"
	"os"
	"strings"

	"github.com/tfyarn/tfyarn/internal/atomicfile"
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
)

// PublishCredentials hands creds to every task's launcher: the launchers
// long-poll the rendezvous "credentials" endpoint and merge what they get
// into the token file their program reads (HADOOP_TOKEN_FILE_LOCATION).
// Call it whenever the AM has obtained fresh delegation tokens (a keytab
// login renewing HDFS tokens before they expire). AMRMTokens and the
// rendezvous secret are stripped (rendezvous.TaskCredentials); creds is not
// modified and may be reused. Publishing unchanged credentials wakes no
// launcher. Credentials too large to hand out
// (rendezvous.MaxCredentialsBytes) are logged and not published.
func (r *TaskRendezvous) PublishCredentials(creds *security.Credentials) {
	creds = creds.Clone()
	creds.RemoveSecret(contract.StatusKeyAlias) // the owner's, not the tasks'
	v, err := r.board.PublishCredentials(creds)
	if err != nil {
		r.logf("not handing fresh credentials to the tasks: %v", err)
		return
	}
	// Credentials' String shows kinds, services and fingerprints only.
	r.logf("credentials for the tasks are at version %d: %s", v, rendezvous.TaskCredentials(creds))
}

// PublishedCredentials returns what the launchers get now (Version 0:
// nothing was published; the launchers keep their containers' tokens).
func (r *TaskRendezvous) PublishedCredentials() rendezvous.CredentialsUpdate {
	return r.board.PublishedCredentials()
}

// amSecretAliases names every secret tfyarn may have put into the AM's
// credentials creds (loaded from its token file) for job jf.
func amSecretAliases(jf contract.JobFile, creds *security.Credentials) []string {
	aliases := []string{rendezvous.SecretAlias, contract.StatusKeyAlias}
	if k := jf.Kerberos; k != nil && k.KeytabSecret != "" {
		aliases = append(aliases, k.KeytabSecret)
	}
	for _, alias := range creds.SecretAliases() {
		if strings.HasPrefix(alias, contract.SecretEnvAliasPrefix) {
			aliases = append(aliases, alias)
		}
	}
	return aliases
}

// dropSecretsFromTokenFile rewrites the container's token file (path)
// without the secrets under aliases, once, atomically and with the file's
// mode kept; a file holding none of them is left alone.
func dropSecretsFromTokenFile(path string, aliases ...string) error {
	if path == "" {
		return fmt.Errorf("appmaster: %s is not set: cannot remove tfyarn's secrets from the container's token file", contract.EnvTokenFile)
	}
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("appmaster: the container's token file: %w", err)
	}
	creds, err := security.ReadCredentialsFile(path)
	if err != nil {
		return fmt.Errorf("appmaster: %w", err)
	}
	removed := false
	for _, alias := range aliases {
		removed = creds.RemoveSecret(alias) || removed
	}
	if !removed {
		return nil
	}
	if err := atomicfile.Write(path, creds.Marshal(), st.Mode().Perm()); err != nil {
		return fmt.Errorf("appmaster: removing tfyarn's secrets from the container's token file %s: %w", path, err)
	}
	return nil
}
