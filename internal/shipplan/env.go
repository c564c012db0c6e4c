package shipplan

import (
	"sort"

	"github.com/tfyarn/tfyarn/internal/contract"
	"github.com/tfyarn/tfyarn/taskspec"
)

// The job's environment reaches every task beside what it ships: the
// checks a YARN run and a local run share.

// CheckTaskEnv refuses a job environment variable that tfyarn sets in
// every task itself (contract.SetForTasks): the job's value would be
// ignored without a word.
func CheckTaskEnv(env map[string]string) error {
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
