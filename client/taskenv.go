package client

import (
	"sort"

	"github.com/tfyarn/tfyarn/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

// Validate is taskspec's check of the job, plus its environment against
// the variables tfyarn sets in every task (checkTaskEnv).
func (j Job) Validate(limits taskspec.ClusterLimits) error {
	if err := j.Job.Validate(limits); err != nil {
		return err
	}
	return checkTaskEnv(j.Env)
}

// checkTaskEnv refuses a job environment variable that tfyarn sets in
// every task itself (contract.SetForTasks): the job's value would be
// ignored without a word.
func checkTaskEnv(env map[string]string) error {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if contract.SetForTasks(k) {
			return invalidf("%s is set by tfyarn for each task; drop it from the environment", k)
		}
	}
	return nil
}
