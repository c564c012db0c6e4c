package submit

import (
	"fmt"
	"time"

	"github.com/tfyarn/tfyarn/internal/amattempt"
	"github.com/tfyarn/tfyarn/internal/rendezvous"
	"github.com/tfyarn/tfyarn/internal/security"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// checkAttempts validates AMAttempts against the RM's cap as the client
// configuration states it, and Timeout, before anything is created.
func checkAttempts(job Job) error {
	if job.AMAttempts < 1 {
		return &taskspec.ValidationError{Message: fmt.Sprintf("--am-attempts %d: give at least 1", job.AMAttempts)}
	}
	if job.Timeout < 0 {
		return &taskspec.ValidationError{Message: fmt.Sprintf("--timeout %s: give a positive duration, e.g. 2h", job.Timeout)}
	}
	if job.AMAttempts == 1 || job.Conf == nil {
		return nil
	}
	limit, err := amattempt.RMCap(job.Conf)
	if err != nil {
		return &taskspec.ValidationError{Message: fmt.Sprintf("--am-attempts: %v", err)}
	}
	if job.AMAttempts > limit {
		return &taskspec.ValidationError{Message: fmt.Sprintf(
			"--am-attempts %d: the ResourceManager allows at most %d (%s); ask for %d or fewer",
			job.AMAttempts, limit, amattempt.RMMaxAttemptsKey, limit)}
	}
	return nil
}

// lifetimeSeconds is d as YARN's LIFETIME timeout, whole seconds rounded up;
// 0 for none.
func lifetimeSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// shareRendezvousSecret puts a rendezvous secret into the AM's credentials
// when the job allows several AM attempts: every attempt then uses it, so
// the launchers of tasks a new attempt adopts still authenticate to it.
func shareRendezvousSecret(clc *hadoopyarn.ContainerLaunchContextProto, attempts int) error {
	if attempts < 2 {
		return nil
	}
	secret, err := rendezvous.NewSecret()
	if err != nil {
		return err
	}
	return addAMSecret(clc, rendezvous.SecretAlias, secret)
}

// addAMSecret puts a secret key into the AM's credentials under alias.
func addAMSecret(clc *hadoopyarn.ContainerLaunchContextProto, alias string, key []byte) error {
	creds := security.NewCredentials()
	if len(clc.GetTokens()) > 0 {
		var err error
		if creds, err = security.ParseCredentials(clc.GetTokens()); err != nil {
			return fmt.Errorf("client: the AM's credentials: %w", err)
		}
	}
	creds.AddSecret(alias, key)
	clc.Tokens = creds.Marshal()
	return nil
}
