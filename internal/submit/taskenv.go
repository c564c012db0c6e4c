package submit

import (
	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/internal/shipplan"
	"github.com/tfyarn/tfyarn/internal/yarnpb/hadoopyarn"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Validate is taskspec's check of the job, plus its environment against
// the variables tfyarn and the job's framework set in every task
// (shipplan.CheckTaskEnv, frameworks.CheckEnv).
func (j Job) Validate(limits taskspec.ClusterLimits) error {
	if err := j.Job.Validate(limits); err != nil {
		return err
	}
	if err := j.CheckFramework(); err != nil {
		return err
	}
	if j.Priority < 0 {
		return invalidf("priority %d: give a whole number >= 0", j.Priority)
	}
	if err := shipplan.CheckTaskEnv(j.Env); err != nil {
		return err
	}
	if err := frameworks.CheckEnv(j.Job, j.SecretEnv, "--secret-env"); err != nil {
		return err
	}
	return shipplan.CheckSecretEnv(j.Env, j.SecretEnv)
}

// CheckFramework reports why the job cannot run under its framework (a
// task type the framework does not have, processes per node where it takes
// none): the part of Validate that needs no cluster.
func (j Job) CheckFramework() error { return frameworks.CheckJob(j.Job) }

// addSecretEnv puts the secret environment into the AM's credentials.
func addSecretEnv(clc *hadoopyarn.ContainerLaunchContextProto, secret map[string]string) error {
	for k, v := range secret {
		if err := addAMSecret(clc, contract.SecretEnvAliasPrefix+k, []byte(v)); err != nil {
			return err
		}
	}
	return nil
}
