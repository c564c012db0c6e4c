package amattempt

import "github.com/tfyarn/tfyarn/internal/hadoopconf"

// RMMaxAttemptsKey caps every application's ApplicationMaster attempts;
// the RM silently lowers a larger request to it, so the client refuses one.
const RMMaxAttemptsKey = "yarn.resourcemanager.am.max-attempts"

// defaultRMMaxAttempts is Hadoop's default for RMMaxAttemptsKey.
const defaultRMMaxAttempts = 2

// RMCap is the ResourceManager's cap on attempts as conf states it
// (Hadoop's default when it does not).
func RMCap(conf *hadoopconf.Config) (int, error) {
	return conf.GetInt(RMMaxAttemptsKey, defaultRMMaxAttempts)
}
