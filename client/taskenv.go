package client

import (
	"sort"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/framework"
	"github.com/tfyarn/tfyarn/internal/shipplan"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Validate is taskspec's check of the job, plus its environment against
// the variables tfyarn sets in every task (shipplan.CheckTaskEnv).
func (j Job) Validate(limits taskspec.ClusterLimits) error {
	if err := j.Job.Validate(limits); err != nil {
		return err
	}
	if err := framework.CheckJob(j.Job); err != nil {
		return err
	}
	if j.Priority < 0 {
		return invalidf("priority %d: give a whole number >= 0", j.Priority)
	}
	if err := shipplan.CheckTaskEnv(j.Env); err != nil {
		return err
	}
	return CheckSecretEnv(j.Env, j.SecretEnv)
}

// maxSecretEnvBytes bounds the secret environment: it travels in the
// application's credentials and in every launcher's program.
const maxSecretEnvBytes = 1 << 20

// CheckSecretEnv refuses a secret variable with a bad name, one tfyarn
// sets itself, one also in env, and a secret environment too large.
func CheckSecretEnv(env, secret map[string]string) error {
	names := make([]string, 0, len(secret))
	for k := range secret {
		names = append(names, k)
	}
	sort.Strings(names)
	total := 0
	for _, k := range names {
		switch _, both := env[k]; {
		case !taskspec.ValidEnvName(k):
			return invalidf("--secret-env %q: not a variable name (letters, digits and _, not starting with a digit)", k)
		case contract.SetForTasks(k):
			return invalidf("--secret-env %s is set by tfyarn for each task; pick another name", k)
		case both:
			return invalidf("%s is given with --setenv and --secret-env; give it once", k)
		}
		total += len(k) + len(secret[k])
	}
	if total > maxSecretEnvBytes {
		return invalidf("--secret-env: %d bytes of secrets exceed %d; pass a file's path instead (--files)", total, maxSecretEnvBytes)
	}
	return nil
}

// addSecretEnv puts the secret environment into the AM's credentials.
func addSecretEnv(clc *hadoopyarn.ContainerLaunchContextProto, secret map[string]string) error {
	for k, v := range secret {
		if err := addAMSecret(clc, contract.SecretEnvAliasPrefix+k, []byte(v)); err != nil {
			return err
		}
	}
	return nil
}
