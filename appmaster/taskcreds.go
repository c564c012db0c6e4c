package appmaster

import (
	"github.com/tfyarn/tfyarn/contract"
	"github.com/tfyarn/tfyarn/rendezvous"
	"github.com/tfyarn/tfyarn/security"
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
