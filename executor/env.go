package executor

import (
	"strconv"
	"strings"

	"github.com/tfyarn/tfyarn/contract"
)

// childEnv is base with the task's variables set: TF_CONFIG and the port
// replace any inherited value; TF_GRPC_REUSE_PORT and PYTHONUNBUFFERED
// only fill in what the user left unset.
func childEnv(base []string, tfConfig string, port int) []string {
	env := setEnv(append([]string(nil), base...), EnvTFConfig, tfConfig, true)
	env = setEnv(env, contract.EnvTaskPort, strconv.Itoa(port), true)
	env = setEnv(env, EnvTFReusePort, "true", false)
	return setEnv(env, EnvPythonUnbuffered, "1", false)
}

func setEnv(env []string, name, value string, override bool) []string {
	prefix := name + "="
	out := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		} else if !override {
			return env
		}
	}
	return append(out, prefix+value)
}

func lookupEnv(env []string, name string) (string, bool) {
	prefix := name + "="
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], prefix); ok {
			return v, true
		}
	}
	return "", false
}

// reusePortEnabled reads TF_GRPC_REUSE_PORT the way TensorFlow does
// (ReadBoolFromEnvVar: "true" or "1", any case). A user who turned it off
// gets a server without SO_REUSEPORT, which cannot bind a held port.
func reusePortEnabled(env []string) bool {
	v, _ := lookupEnv(env, EnvTFReusePort)
	v = strings.ToLower(strings.TrimSpace(v))
	return v == "true" || v == "1"
}
